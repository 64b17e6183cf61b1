"""The background worker: takes accepted jobs in order, indexes them in batches, resolves the
futures `?wait=true` callers wait on. The queue itself is only a cache of the placeholders, which
live in the engine: a restart rebuilds it from them, so stopping never waits for the queue to
drain, only for the slice of texts being embedded."""

import logging
import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field

from app.errors import ShuttingDown
from app.ingest.pipeline import Indexer, Job

log = logging.getLogger(__name__)
BATCH_DOCUMENTS = 16


@dataclass
class _Item:
    job: Job | None  # None: a barrier, done once everything submitted before it is
    done: "Future[int]" = field(default_factory=Future)


class IndexQueue:
    def __init__(self, indexer: Indexer) -> None:
        self._indexer = indexer
        self._items: queue.Queue[_Item | None] = queue.Queue()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="astrolabe-indexer", daemon=True)

    def start(self) -> None:
        for job in self._indexer.pending_jobs():
            self.submit(job)
        self._thread.start()

    def stop_soon(self) -> None:
        """Stop between documents; what is left stays pending for the next start, and its
        `?wait=true` callers are told so at once."""
        self._stopping.set()
        self._items.put(None)  # wakes the worker if it waits for work

    def stop(self) -> None:
        self.stop_soon()
        if self._thread.is_alive():
            self._thread.join()

    def submit(self, job: Job) -> "Future[int]":
        item = _Item(job)
        if self._stopping.is_set():
            item.done.set_exception(_shutting_down())
        else:
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
            written = self._indexer.index(jobs, self._stopping) if jobs else {}
        except Exception as exc:
            if len(batch) > 1:  # find the culprit: retry one by one
                for item in batch:
                    self._process([item])
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
