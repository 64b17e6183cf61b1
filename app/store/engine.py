"""An engine process: one generation of the embedded shard, served over a Unix socket to the HTTP
process (`app.store.process`). Qdrant Edge holds the interpreter for every call: here it holds
this process's only, and a rebuild (`optimize`, minutes at 100k chunks) runs in a process of its
own, so neither stalls the HTTP process's parsing, embedding and serialising.

One loop, two roles (the supervisor, `app.store.embedded`, drives both):
- served (no `--shard`): opens the generation in use and its facet snapshot (or reads the
  documents back), then answers store calls. For a rebuild it copies its shard and journals
  every write from that moment; for the handover it holds writes (seal), then answers every
  call with Moved (retire).
- rebuilt (`--shard`): opens such a copy, builds its HNSW graph, replays the journal as it
  grows, and when told replays it to the given end and flushes: from then on it is served.

Lines on stdout tell the supervisor where it stands: {"opened": shard}, {"ready": socket} or
{"error": class, "message": ...}. It dies with its supervisor (PR_SET_PDEATHSIG), even a
kill -9 one: like a crash, which the write-ahead logs are for."""

if __name__ == "__main__":  # the engine process: qdrant-client's models without its clients
    from app.store.qdrant_models import import_models_only

    import_models_only()

import argparse
import ctypes
import gc
import json
import logging
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection, Listener
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from app.config import Settings
from app.store.edge import EdgeStore
from app.store.errors import StorageFull, StoreError
from app.store.journal import JournalReader, JournalWriter
from app.store.launch import KEY_ENV, REBUILD_SEGMENTS
from app.store.layout import IndexLayout
from app.store.turnstile import Turnstile
from app.store.wire import (
    PROTOCOL,
    READS,
    WRITES,
    Call,
    Control,
    Moved,
    failure_of,
)
from app.telemetry.logs import configure_logging

log = logging.getLogger("astrolabe.engine")
REPLAY_PAUSE_S = 0.02  # how often a rebuilt copy looks for new journal records
PR_SET_PDEATHSIG = 1
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


def disk_usage(path: Path) -> int:
    """Bytes `path` takes on disk (allocated blocks: sparse files count what they hold)."""
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


class Engine:
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

    def answer(self, call: Call) -> Any:
        if call.method in CONTROL_METHODS:
            return CONTROL_METHODS[call.method](self, *call.args, **call.kwargs)
        if self._moved:
            raise Moved()
        if call.method in WRITES:
            return self._write(call)
        if call.method in READS:
            with self._reads.turn():
                return getattr(self.store, call.method)(*call.args, **call.kwargs)
        raise StoreError(f"an engine process does not answer {call.method!r}")

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
        needed = disk_usage(self.store.path) + self.store.min_free_bytes
        free = shutil.disk_usage(copy.parent).free
        if free < needed:
            raise StorageFull(
                f"a rebuild needs {needed // 2**20} MiB free beside the index, {free // 2**20}"
                " MiB are: the index is served as it is"
            )
        with self.store.writes_paused():
            self.store.flush()
            shutil.copytree(self.store.path, copy)
            self.store.save_facets(IndexLayout.facet_snapshot(copy))
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

    def backup(self, target: str) -> Any:
        """A backup's copy (app.backup.shard), from the engine that serves: a retired one
        answers Moved, so the caller asks the one that took over."""
        from app.backup.shard import copy_at_one_moment

        if self._moved:
            raise Moved()
        return copy_at_one_moment(self.store, Path(target))

    def close(self, release: bool = True) -> None:
        """Close the shard (saving its facet index unless told otherwise; `release`: see
        EdgeStore.close) and the journal."""
        self.stop_copy()
        self.store.close(keep_facets=self.keep_facets, release=release)

    def replay_from(self, journal: Path) -> None:
        self._replay = Replay(self.store, journal)
        self._replay.start()


CONTROL_METHODS: dict[str, Callable[..., Any]] = {
    Control.HELLO: Engine.hello,
    Control.START_COPY: Engine.start_copy,
    Control.STOP_COPY: Engine.stop_copy,
    Control.PROGRESS: Engine.progress,
    Control.SHAPE: Engine.shape,
    Control.SEAL: Engine.seal,
    Control.UNSEAL: Engine.unseal,
    Control.FINISH: Engine.finish,
    Control.RETIRE: Engine.retire,
    Control.SHUTDOWN: Engine.shutdown,
    Control.BACKUP: Engine.backup,
}


class Replay:
    """A rebuilt copy applying the served shard's journal as it grows, through the same store
    methods the writes first went through (so the facet index follows too)."""

    def __init__(self, store: EdgeStore, journal: Path) -> None:
        self._store = store
        self._reader = JournalReader(journal)
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="journal-replay", daemon=True)
        self.applied = 0
        self._failure: Exception | None = None

    def start(self) -> None:
        self._thread.start()

    def check(self) -> None:
        """Raise what stopped the replay, if anything did (the rebuild is then abandoned)."""
        if self._failure is not None:
            raise StoreError(f"replaying the journal failed: {self._failure}")

    def _follow(self) -> None:
        try:
            while not self._finished.wait(REPLAY_PAUSE_S):
                self._apply()
        except Exception as exc:
            log.exception("replaying the journal failed")
            self._failure = exc

    def _apply(self, up_to: int | None = None) -> None:
        with self._lock:
            for method, args in self._reader.read(up_to):
                getattr(self._store, method)(*args)
                self.applied += 1

    def finish(self, records: int) -> int:
        self._finished.set()
        self._thread.join()
        self.check()
        try:
            self._apply(records)
        finally:
            self._reader.close()
        if self.applied != records:
            raise StoreError(f"the journal holds {self.applied} of {records} records")
        return self.applied


def _serve_connection(engine: Engine, connection: Connection) -> None:
    with connection:
        while True:
            try:
                call = connection.recv()
            except (EOFError, OSError):
                return
            try:
                reply = engine.answer(call)
            except Exception as exc:
                if not isinstance(exc, (Moved, StoreError)):
                    log.exception("%s failed", call.method)
                reply = failure_of(exc)
            try:
                connection.send(reply)
            except OSError:
                return


def _accept(engine: Engine, listener: Listener) -> None:
    while not engine.stopped.is_set():
        try:
            connection = listener.accept()
        except OSError:  # the listener closed, or a client that failed the handshake
            if engine.stopped.is_set():
                return
            continue
        threading.Thread(
            target=_serve_connection, args=(engine, connection), name="engine-call", daemon=True
        ).start()


def _report(**line: Any) -> None:
    print(json.dumps(line), flush=True)


def _die_with_parent(parent: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the supervisor died before the line above
        os._exit(1)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app.store.engine")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--min-free-bytes", type=int, required=True)
    parser.add_argument("--shard", type=Path, help="a rebuild's copy: optimize it, then replay")
    parser.add_argument(
        "--segments", type=int, default=REBUILD_SEGMENTS, help="a rebuild merges down to these"
    )
    return parser.parse_args(argv)


def _open(args: argparse.Namespace) -> EdgeStore:
    if args.shard is None:
        return EdgeStore(args.data_dir, args.collection, args.min_free_bytes)
    # Every point copied is indexed (the indexing threshold counts kilobytes of vectors).
    return EdgeStore(
        args.data_dir,
        args.collection,
        args.min_free_bytes,
        shard=args.shard,
        optimizers=qe.EdgeOptimizersConfig(
            indexing_threshold=1, default_segment_number=args.segments
        ),
    )


def main(argv: list[str] | None = None) -> int:
    configure_logging(Settings().log_format)  # the lines go where the supervisor's go
    args = _parse(argv)
    _die_with_parent(args.parent)
    key = bytes.fromhex(os.environ.pop(KEY_ENV))
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        store = _open(args)
    except StoreError as exc:
        _report(error=type(exc).__name__, message=exc.message)
        return 1
    _report(opened=str(store.path))
    engine = Engine(store, stopped)
    if args.shard is not None:
        journal = IndexLayout.journal(args.shard)

        def rebuild() -> None:
            """The graph build, and the replay thread it starts, run niced; the handover's
            last records are applied by the call that finishes it, at the normal priority."""
            store.optimize()
            store.read_back()  # the segments it wrote left the page cache
            engine.replay_from(journal)

        at_niceness(REBUILD_NICENESS, rebuild)
    else:
        store.read_back()  # what is not in the page cache (a reboot, a close) comes back
        store.wait_for_facet_index()
    gc.freeze()  # a full collection would walk every object of the start while searches wait
    listener = Listener(args.socket, "AF_UNIX", authkey=key)
    threading.Thread(target=_accept, args=(engine, listener), daemon=True).start()
    _report(ready=args.socket)
    engine.stopped.wait()
    listener.close()
    engine.close(release=False)
    logging.shutdown()
    os._exit(0)  # with the flushed shard open: its files stay in the page cache


if __name__ == "__main__":
    sys.exit(main())
