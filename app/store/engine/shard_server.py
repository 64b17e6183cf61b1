"""A shard server: one generation of the embedded shard, answering the `Store` calls that
`ProcessStore` sends over a Unix socket, and the supervisor's control calls. Qdrant Edge holds
the interpreter for every call: here it holds this process's only, and a rebuild (`optimize`,
minutes at 100k chunks) runs in a process of its own, so neither stalls the HTTP process.

One server, two roles (the supervisor drives both):
- served: the generation in use. For a rebuild it copies its shard and journals every write
  from that moment; for the handover it holds writes (seal), then answers every call with
  Moved (retire).
- rebuilt: a copy; builds its HNSW graph, replays the journal as it grows (`replay`), and when
  told replays it to the given end and flushes: from then on it is served.

Its process's program (arguments, logging, the listener) is `app.engine_child`."""

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from app.store.copies import check_room_for_copy, shard_copied
from app.store.edge import EdgeStore
from app.store.engine.batching import SearchBatcher
from app.store.engine.journal import JournalWriter
from app.store.engine.launch import REBUILD_SEGMENTS
from app.store.engine.replay import Replay
from app.store.engine.turnstile import Turnstile
from app.store.engine.wire import COPIES, PROTOCOL, READS, WRITES, Call, Control, Moved
from app.store.errors import StoreError
from app.store.layout import IndexLayout

# A rebuild takes the cores searches leave idle: on 2 cores its graph build would otherwise take
# half the CPU from the searches running beside it.
REBUILD_NICENESS = 10


def at_niceness(niceness: int, work: Callable[[], object]) -> None:
    """`work` in a thread of its own at `niceness`. On Linux a nice value belongs to a thread and
    the threads it starts, so the threads that answer calls keep the normal priority: a rebuilt
    copy becomes the served engine at its handover (a process-wide nice left it, and every
    search after the first handover, behind the HTTP process and any load on the machine)."""

    failed: list[BaseException] = []

    def run() -> None:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
        try:
            work()
        except BaseException as exc:  # raised again in the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=run, name="rebuild")
    worker.start()
    worker.join()
    if failed:
        raise failed[0]


def open_shard_store(
    data_dir: Path,
    collection: str,
    min_free_bytes: int,
    copy: Path | None = None,
    segments: int = REBUILD_SEGMENTS,
) -> EdgeStore:
    """The generation in use, or (`copy`) a rebuild's copy, whose every point is indexed (the
    indexing threshold counts kilobytes of vectors) and whose segments merge down to
    `segments`."""
    if copy is None:
        return EdgeStore(data_dir, collection, min_free_bytes)
    optimizers = qe.EdgeOptimizersConfig(indexing_threshold=1, default_segment_number=segments)
    return EdgeStore(data_dir, collection, min_free_bytes, shard=copy, optimizers=optimizers)


class ShardServer:
    """Answers calls on one shard; the write gate makes a handover's cut-off exact."""

    def __init__(self, store: EdgeStore, stopped: threading.Event) -> None:
        self.store = store
        self.stopped = stopped
        self.keep_facets = True
        self._gate = threading.Condition()
        self._sealed = False
        self._moved = False
        self._writing = 0
        self._journal: JournalWriter | None = None
        self._journaled = 0
        self._replay: Replay | None = None
        self._last_write = time.monotonic()
        self._points_written = 0
        self._reads = Turnstile()
        self._searches = SearchBatcher(self._reads, store.query_batch)

    def answer(self, call: Call) -> Any:
        if call.method in CONTROL_METHODS:
            return CONTROL_METHODS[call.method](self, *call.args, **call.kwargs)
        if self._moved:
            raise Moved()
        if call.method in WRITES:
            return self._write(call)
        if call.method == "query_batch":
            return self._searches.query_batch(*call.args, **call.kwargs)
        if call.method in READS:
            with self._reads.turn():
                return getattr(self.store, call.method)(*call.args, **call.kwargs)
        if call.method in COPIES:
            return getattr(self.store, call.method)(*call.args, **call.kwargs)
        raise StoreError(f"a shard server does not answer {call.method!r}")

    def _write(self, call: Call) -> Any:
        with self._gate:
            while self._sealed and not self._moved:
                self._gate.wait()
            if self._moved:
                raise Moved()
            self._writing += 1
            self._last_write = time.monotonic()
            if call.method == "upsert":
                self._points_written += len(call.args[0])
        try:
            return getattr(self.store, call.method)(*call.args, **call.kwargs)
        finally:
            with self._gate:
                self._writing -= 1
                self._gate.notify_all()

    # --- control calls ------------------------------------------------------------------------

    def hello(self, protocol: int) -> dict[str, Any]:
        if protocol != PROTOCOL:
            raise StoreError(f"engine protocol {PROTOCOL}, the caller speaks {protocol}")
        return {"pid": os.getpid(), "shard": str(self.store.path)}

    def start_copy(self, target: str) -> None:
        """Copy the shard to `target` with its facet snapshot, at one moment of its writes, and
        journal every write from that moment."""
        copy = Path(target)
        check_room_for_copy(self.store, copy.parent, "a rebuild", "the index is served as it is")
        with shard_copied(self.store, copy):
            self._journal = JournalWriter(IndexLayout.journal(copy))
            self._journaled = 0
            self.store.on_write = self._journal_write

    def _journal_write(self, method: str, args: tuple[Any, ...]) -> None:
        if self._journal is not None:
            self._journal.append(method, args)
            self._journaled += 1

    def stop_copy(self) -> None:
        with self.store.writes_paused():
            self.store.on_write = None
            if self._journal is not None:
                self._journal.close()
                self._journal = None

    def progress(self) -> dict[str, int]:
        applied = 0
        if self._replay is not None:
            self._replay.check()
            applied = self._replay.applied
        return {"journaled": self._journaled, "applied": applied}

    def shape(self) -> dict[str, float]:
        """How many segments the shard has, how long since its last write (or its open), and how
        many points this process has written (each a new version in the appendable segment,
        which keeps the versions it replaced until a rebuild)."""
        return {
            "segments": self.store.segments()["segments"],
            "idle_s": time.monotonic() - self._last_write,
            "written": self._points_written,
        }

    def seal(self) -> int:
        """Hold every write (those running finish first); the records journaled in all."""
        with self._gate:
            self._sealed = True
            while self._writing:
                self._gate.wait()
        return self._journaled

    def unseal(self) -> None:
        self.stop_copy()
        with self._gate:
            self._sealed = False
            self._gate.notify_all()

    def finish(self, records: int) -> int:
        """(A rebuilt copy) replay the journal up to `records` and flush: it is then the
        served shard's equal."""
        if self._replay is None:
            raise StoreError("only a rebuilt copy finishes a journal")
        applied = self._replay.finish(records)
        self.store.flush()
        return applied

    def retire(self) -> None:
        with self._gate:
            self._moved = True
            self._gate.notify_all()

    def shutdown(self, keep_facets: bool = True) -> None:
        self.keep_facets = keep_facets
        self.stopped.set()

    def close(self, release: bool = True) -> None:
        """Close the shard (saving its facet index unless told otherwise; `release`: see
        EdgeStore.close) and the journal."""
        self.stop_copy()
        self.store.close(keep_facets=self.keep_facets, release=release)

    def prepare(self, rebuild_journal: Path | None) -> None:
        """Before the first call, for a rebuild's copy (`rebuild_journal`): its graph built, the
        segments it wrote read back into the page cache, and the journal followed. The build,
        and the replay thread it starts, run niced; the handover's last records are applied by
        the call that finishes it, at normal priority. The served shard needs nothing: its
        open reads what searches read (`read_back`)."""
        if rebuild_journal is None:
            return

        def rebuild() -> None:
            self.store.optimize()
            self.store.read_back()  # the segments it wrote left the page cache
            self.replay_from(rebuild_journal)

        at_niceness(REBUILD_NICENESS, rebuild)

    def replay_from(self, journal: Path) -> None:
        self._replay = Replay(self.store, journal)
        self._replay.start()


CONTROL_METHODS: dict[str, Callable[..., Any]] = {
    Control.HELLO: ShardServer.hello,
    Control.START_COPY: ShardServer.start_copy,
    Control.STOP_COPY: ShardServer.stop_copy,
    Control.PROGRESS: ShardServer.progress,
    Control.SHAPE: ShardServer.shape,
    Control.SEAL: ShardServer.seal,
    Control.UNSEAL: ShardServer.unseal,
    Control.FINISH: ShardServer.finish,
    Control.RETIRE: ShardServer.retire,
    Control.SHUTDOWN: ShardServer.shutdown,
}
