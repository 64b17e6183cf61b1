"""The background worker: takes accepted jobs in order, indexes them in batches, resolves the
futures `?wait=true` callers wait on. The queue itself is only a cache of the placeholders, which
live in the engine: a restart rebuilds it from them, so stopping never waits for the queue to
drain, only for the slice of texts being embedded."""

import logging
import math
import queue
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field

from app.errors import QueueFull, ShuttingDown
from app.ingest.pipeline import Indexer, Job
from app.ingest.purge import Purger
from app.store.errors import EngineUnavailable, StorageFull

log = logging.getLogger(__name__)
BATCH_DOCUMENTS = 16
RATE_WINDOW_SECONDS = 60.0


@dataclass
class _Item:
    job: Job | None  # None: a barrier, done once everything submitted before it is
    done: "Future[int]" = field(default_factory=Future)


class IndexQueue:
    def __init__(self, indexer: Indexer, max_pending: int = 10_000) -> None:
        self._indexer = indexer
        self.max_pending = max_pending
        self._items: queue.Queue[_Item | None] = queue.Queue()
        self._depth = 0  # jobs submitted and not yet done
        self._finished: deque[tuple[float, int]] = deque()  # (when, documents) per batch
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="astrolabe-indexer", daemon=True)

    def start(self) -> None:
        Purger(self._indexer).resume()  # a purge cut short by a kill finishes before any job
        for job in self._indexer.pending_jobs():
            self.submit(job)
        self._thread.start()

    def stop_soon(self) -> None:
        """Stop between documents; what is left stays pending for the next start, and its
        `?wait=true` callers are told so at once."""
        self._stopping.set()
        self._release_waiting()
        self._items.put(None)  # wakes the worker if it waits for work (after the drain)

    def stop(self) -> None:
        self.stop_soon()
        if self._thread.is_alive():
            self._thread.join()

    @property
    def depth(self) -> int:
        """Documents accepted and not yet processed."""
        return self._depth

    def rate(self) -> float:
        """Documents processed (indexed or failed) per second over the last minute."""
        now = time.monotonic()
        with self._lock:
            while self._finished and self._finished[0][0] < now - RATE_WINDOW_SECONDS:
                self._finished.popleft()
            done = sum(count for _, count in self._finished)
        return round(done / RATE_WINDOW_SECONDS, 2)

    def check_room(self, documents: int) -> None:
        """429 when `documents` more would pass the bound; Retry-After from the current rate."""
        if self._depth + documents <= self.max_pending:
            return
        excess = self._depth + documents - self.max_pending
        rate = self.rate()
        wait = math.ceil(excess / rate) if rate > 0 else 30
        raise QueueFull(
            f"the ingest queue is full ({self._depth} documents pending, at most"
            f" {self.max_pending}): retry later",
            retry_after=min(max(wait, 1), 600),
        )

    def submit(self, job: Job) -> "Future[int]":
        item = _Item(job)
        if self._stopping.is_set():
            item.done.set_exception(_shutting_down())
        else:
            with self._lock:
                self._depth += 1
            self._items.put(item)
        return item.done

    def submit_barrier(self) -> "Future[int]":
        """Done once every job submitted before it is done (tests, demo loading)."""
        item = _Item(None)
        self._items.put(item)
        return item.done

    def _run(self) -> None:
        while not self._stopping.is_set():
            batch = self._next_batch()
            if batch is None:
                break
            self._process(batch)
        self._release_waiting()

    def _release_waiting(self) -> None:
        while True:
            try:
                item = self._items.get_nowait()
            except queue.Empty:
                return
            if item is not None and not item.done.done():
                item.done.set_exception(_shutting_down())

    def _next_batch(self) -> list[_Item] | None:
        first = self._items.get()
        if first is None:
            return None
        batch = [first]
        while len(batch) < BATCH_DOCUMENTS:
            try:
                item = self._items.get_nowait()
            except queue.Empty:
                break
            if item is None:
                self._items.put(None)  # stop after this batch
                break
            batch.append(item)
        return batch

    def _process(self, batch: list[_Item]) -> None:
        jobs = [item.job for item in batch if item.job is not None]
        try:
            self._index(batch, jobs)
        finally:
            with self._lock:
                self._depth -= len(jobs)
                self._finished.append((time.monotonic(), len(jobs)))

    def _index(self, batch: list[_Item], jobs: list[Job]) -> None:
        try:
            written = self._indexer.index(jobs, self._stopping) if jobs else {}
        except (StorageFull, EngineUnavailable) as exc:
            # The engine failed, not the documents: they stay pending (resumed at the next
            # start) and marking them failed would need the very write that failed.
            log.warning("indexing %d documents postponed: %s", len(jobs), exc.message)
            for item in batch:
                item.done.set_exception(exc)
            return
        except Exception as exc:
            if len(batch) > 1:  # find the culprit: retry one by one
                for item in batch:
                    self._index([item], [item.job] if item.job else [])
                return
            log.exception("indexing %s failed", jobs)
            for job in jobs:
                self._indexer.fail(job, f"indexing failed: {type(exc).__name__}: {exc}")
            for item in batch:
                item.done.set_exception(exc)
            return
        for item in batch:
            if item.job is not None and item.job not in written and self._stopping.is_set():
                item.done.set_exception(_shutting_down())  # left pending by the stop
            else:
                item.done.set_result(written.get(item.job, 0) if item.job else 0)


def _shutting_down() -> ShuttingDown:
    return ShuttingDown(
        "the service is shutting down: the documents were accepted and are indexed after"
        " the next start"
    )
