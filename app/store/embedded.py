"""The embedded engine as `serve` runs it: an engine process (`app.store.engine`) serving the
generation in use, and, once enough chunks are outside the HNSW graph, a second one rebuilding a
copy that takes over when it has caught up. Searches never wait for a rebuild: the copy's
`optimize` holds another process, and the handover holds only writes, for the few journal
records the copy has not replayed yet.

A rebuild is a small state machine, driven by one supervisor thread (which also starts every
engine process: a child dies with the thread that started it, see `engine._die_with_parent`):

    SERVING --(plain chunks >= threshold)--> BUILDING: the served engine copies its shard and
        journals its writes from then on; a rebuild engine optimizes the copy, replays the journal
    SERVING --(a rebuild done, then no write for 120 s, more than 3 segments)-->
        BUILDING the same way, but the copy's segments are merged down to 2 (a merge)
    BUILDING --(caught up)--> HANDING_OVER: writes held (seal); the copy replays to the end and
        flushes; `index.json` names it (the one atomic step); the old engine retires, then exits
    any failure --> SERVING on the generation `index.json` names, the copy deleted, retried later

A kill -9 anywhere leaves `index.json` naming a complete generation: the old one until the
switch (every accepted write is in it), the new one after (it replayed every journaled write
before the switch). The next start deletes every other generation."""

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from enum import StrEnum
from multiprocessing.connection import Client, Connection
from pathlib import Path
from typing import Any

from app.config import Settings
from app.store import errors
from app.store.base import VectorIndex
from app.store.launch import MERGED_SEGMENTS, Launcher
from app.store.layout import IndexLayout
from app.store.process import Endpoint, ProcessStore
from app.store.wire import PROTOCOL, Call, Control, Failure, raise_failure

log = logging.getLogger("astrolabe.engine")
# The kill -9 tests name a step of the handover here; this process kills itself there.
FAILPOINT_ENV = "ASTROLABE_FAILPOINT"
POLL_S = 2.0  # how often the supervisor looks at the served engine
CATCH_UP_POLL_S = 0.05
CAUGHT_UP_RECORDS = 16  # journal records a copy may lag when the handover starts
RETRY_AFTER_FAILURE_S = 300.0
# Once writes pause this long after a rebuild, the index is merged down to MERGED_SEGMENTS: the
# rebuilds made while they arrived leave up to REBUILD_SEGMENTS, each searched on its own. A
# merge re-indexes every chunk (100 s of two cores at 100k), so a short pause does not start one.
MERGE_AFTER_IDLE_S = 120.0
STOP_WAIT_S = 30.0
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def _failpoint(step: str) -> None:
    if os.environ.get(FAILPOINT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


class Phase(StrEnum):
    SERVING = "serving"
    BUILDING = "building"
    HANDING_OVER = "handing_over"


@dataclass
class EngineProcess:
    """One child running `app.store.engine`; its stdout lines say where it stands."""

    process: subprocess.Popen[str]
    socket: str
    key: bytes
    copy: Path | None = None  # a rebuild's copy; None: the generation in use
    opened: threading.Event = field(default_factory=threading.Event)
    ready: threading.Event = field(default_factory=threading.Event)
    error: str | None = None
    error_kind: str = "StoreError"
    _control: Connection | None = None

    @classmethod
    def watch(
        cls, process: "subprocess.Popen[str]", socket: str, key: bytes, copy: Path | None = None
    ) -> "EngineProcess":
        """Follow a launched engine (`app.store.launch`) through its stdout lines."""
        engine = cls(process, socket, key, copy)
        threading.Thread(target=engine._read_lines, name="engine-lines", daemon=True).start()
        return engine

    def _read_lines(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                said = json.loads(line)
            except ValueError:
                continue
            if "opened" in said:
                self.opened.set()
            elif "ready" in said:
                self.ready.set()
            elif "error" in said:
                self.error_kind, self.error = str(said["error"]), str(said["message"])
        self.process.stdout.close()
        if self.error is None:
            self.error = f"the engine process exited ({self.process.wait()})"
        self.opened.set()  # whoever waits for it learns of the failure
        self.ready.set()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_opened(self) -> None:
        """Returns once the shard is open; raises the engine's refusal as the store error it
        was (a data directory in use or unusable: `serve` exits with one line)."""
        self.opened.wait()
        if self.error is not None:
            raise_failure(Failure(self.error_kind, self.error))

    def control(self, method: str, *args: Any) -> Any:
        if self._control is None:
            self._control = Client(self.socket, "AF_UNIX", authkey=self.key)
            self._control.send(Call(Control.HELLO, (PROTOCOL,)))
            self._control.recv()
        self._control.send(Call(method, args))
        reply = self._control.recv()
        if isinstance(reply, Failure):
            raise_failure(reply)
        return reply

    def stop(self, keep_facets: bool = True) -> None:
        """Ask it to close its shard and exit (SIGTERM before it listens); kill it if it does
        not within STOP_WAIT_S."""
        try:
            if self.alive and self.ready.is_set() and self.error is None:
                self.control(Control.SHUTDOWN, keep_facets)
            elif self.alive:
                self.process.terminate()
        except (OSError, EOFError, errors.StoreError):
            pass
        try:
            self.process.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.kill()
        self._close_control()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self._close_control()

    def _close_control(self) -> None:
        if self._control is not None:
            self._control.close()
            self._control = None


def _resident_bytes(pid: int) -> int | None:
    """None once the process has gone."""
    try:
        pages = Path(f"/proc/{pid}/statm").read_text().split()[1]
    except (OSError, IndexError):
        return None
    return int(pages) * PAGE_SIZE


def launch_for(settings: Settings) -> Launcher:
    return Launcher.new(settings.data_dir, settings.collection, settings.min_free_bytes)


@dataclass
class Rebuild:
    engine: EngineProcess
    copy: Path
    merge: bool  # a merge of the segments the rebuilds left, not a graph for new chunks
    started: float = field(default_factory=time.monotonic)

    @property
    def kind(self) -> str:
        return "merged" if self.merge else "rebuilt"


class EmbeddedEngine:
    """Starts, watches and rebuilds the engine processes; `store` is what the app uses."""

    def __init__(
        self,
        settings: Settings,
        threshold: int | None = None,
        launched: tuple[Launcher, "subprocess.Popen[str]"] | None = None,
        merge_after_idle_s: float = MERGE_AFTER_IDLE_S,
    ) -> None:
        """`launched`: the served engine `serve` started before its own imports (socket 1)."""
        self.settings = settings
        self.layout = IndexLayout.of(settings.data_dir, settings.collection)
        self.threshold = settings.hnsw_threshold if threshold is None else threshold
        self.merge_after_idle_s = merge_after_idle_s
        # Owed after each rebuild, paid by one merge: never twice on the segments it left, and
        # never at a start (an index an offline optimize left in many segments stays so).
        self._merge_owed = False
        self.phase = Phase.SERVING
        self.rebuilds = 0
        self.last_failure: str | None = None
        if launched is None:
            self._launcher = launch_for(settings)
            self._first: subprocess.Popen[str] | None = None
        else:
            self._launcher, self._first = launched
        self._socket_number = 0
        self._endpoint = Endpoint()
        self.store = ProcessStore(self._endpoint, self._launcher.key, self)
        self._served: EngineProcess | None = None
        self._rebuild: Rebuild | None = None
        self._retry_at = 0.0
        self._stopping = threading.Event()
        self._started = threading.Event()
        self._start_error: BaseException | None = None
        self._thread = threading.Thread(target=self._supervise, name="engine-supervisor")

    # --- from other threads -----------------------------------------------------------------

    @property
    def rebuilding(self) -> bool:
        return self.phase is not Phase.SERVING

    def engine_memory(self) -> dict[str, int]:
        """Resident bytes of the served engine and, while one runs, of the rebuild's: the
        process collector of `/metrics` sees only the HTTP process."""
        rebuild = self._rebuild
        engines = {"serving": self._served, "rebuild": rebuild.engine if rebuild else None}
        memory = {
            role: _resident_bytes(engine.process.pid)
            for role, engine in engines.items()
            if engine is not None
        }
        return {role: size for role, size in memory.items() if size is not None}

    def start(self) -> ProcessStore:
        """Start the served engine; returns once its shard is open (raises its refusal)."""
        self._thread.start()
        self._started.wait()
        if self._start_error is not None:
            self._thread.join()
            raise self._start_error
        return self.store

    def close(self) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
        shutil.rmtree(self._launcher.sockets, ignore_errors=True)

    # --- the supervisor thread --------------------------------------------------------------

    def _supervise(self) -> None:
        try:
            self._start_served().wait_opened()
        except BaseException as exc:
            self._start_error = exc
            if self._served is not None:
                self._served.kill()
            self._started.set()
            return
        self._started.set()
        try:
            while not self._stopping.wait(self._pause()):
                try:
                    self._step()
                except (OSError, EOFError, errors.StoreError) as exc:
                    # An engine died mid-call: the next step sees it and recovers.
                    log.warning("engine supervisor: %s: %s", type(exc).__name__, exc)
        finally:
            self._stop_all()

    def _pause(self) -> float:
        return CATCH_UP_POLL_S if self._rebuild is not None else POLL_S

    def _launch(self, copy: Path | None = None, segments: int | None = None) -> EngineProcess:
        self._socket_number += 1
        socket = self._launcher.socket(self._socket_number)
        if self._first is not None and copy is None:  # launched by `serve` on socket 1
            process, self._first = self._first, None
        else:
            process = self._launcher.launch(socket, copy, segments)
        return EngineProcess.watch(process, socket, self._launcher.key, copy)

    def _start_served(self) -> EngineProcess:
        """Launch the served engine; its address is published once it listens (it may already:
        `serve` launched the first one early, so it is made the served one before watching)."""
        engine = self._served = self._launch()
        threading.Thread(target=self._publish_when_ready, args=(engine,), daemon=True).start()
        return engine

    def _publish_when_ready(self, engine: EngineProcess) -> None:
        engine.ready.wait()
        if engine is not self._served:
            return
        if engine.error is None:
            self._endpoint.set(engine.socket)
        else:
            self._endpoint.fail(engine.error)

    def _step(self) -> None:
        served = self._served
        assert served is not None
        if not served.alive:
            self._recover(served)
        elif self._rebuild is None:
            self._maybe_rebuild(served)
        else:
            self._advance(served, self._rebuild)

    def _recover(self, served: EngineProcess) -> None:
        """The served engine died: start it again on the generation `index.json` names (unless
        it never got ready: then the service reports why and stays not ready)."""
        if self._rebuild is not None:
            self._abandon(self._rebuild, "the served engine died")
        if not self._endpoint.version:
            self._endpoint.fail(served.error or "the engine process exited")
            self._stopping.set()
            return
        log.error("the engine process died (%s): restarting it", served.error)
        self._endpoint.clear()
        self._start_served()

    def _maybe_rebuild(self, served: EngineProcess) -> None:
        if not served.ready.is_set() or time.monotonic() < self._retry_at:
            return
        index = served.control("vector_index")
        if not isinstance(index, VectorIndex):
            return
        shape = served.control(Control.SHAPE)
        threshold = max(self.threshold, 1)
        # Points the served engine wrote that are gone again (a document's placeholder, the
        # versions a document sent again replaced) stay in the appendable segment until a
        # rebuild, though few chunks may be outside the graph; those still outside it are the
        # written ones alive.
        replaced = int(shape["written"]) - index.plain
        if index.plain >= threshold:
            why, merge = f"{index.plain} chunks outside the HNSW graph: rebuilding", False
        elif replaced >= threshold:
            why, merge = f"{replaced} points replaced since the last rebuild: rebuilding", False
        elif self._merge_due(shape):
            why, merge = "writes paused: merging the index's segments into", True
        else:
            return
        copy = self.layout.next_generation()
        log.info("%s %s", why, copy.name)
        self._start_rebuild(served, copy, merge)

    def _merge_due(self, shape: dict[str, float]) -> bool:
        if not self._merge_owed or shape["idle_s"] < self.merge_after_idle_s:
            return False
        self._merge_owed = shape["segments"] > MERGED_SEGMENTS + 1  # and the appendable one
        return self._merge_owed

    def _start_rebuild(self, served: EngineProcess, copy: Path, merge: bool) -> None:
        try:
            served.control(Control.START_COPY, str(copy))
        except errors.StoreError as exc:
            self._failed(f"rebuild not started: {exc.message}")
            self._discard(copy)
            return
        _failpoint("copied")
        engine = self._launch(copy, MERGED_SEGMENTS if merge else None)
        self._rebuild = Rebuild(engine, copy, merge)
        self.phase = Phase.BUILDING

    def _advance(self, served: EngineProcess, rebuild: Rebuild) -> None:
        engine = rebuild.engine
        if not engine.alive or (engine.ready.is_set() and engine.error is not None):
            self._abandon(rebuild, engine.error or "the rebuild engine exited")
            return
        if not engine.ready.is_set():
            return
        journaled = served.control(Control.PROGRESS)["journaled"]
        try:
            applied = engine.control(Control.PROGRESS)["applied"]
        except errors.StoreError as exc:
            self._abandon(rebuild, exc.message)
            return
        if journaled - applied <= CAUGHT_UP_RECORDS:
            _failpoint("caught_up")
            self._hand_over(served, rebuild)

    def _hand_over(self, served: EngineProcess, rebuild: Rebuild) -> None:
        self.phase = Phase.HANDING_OVER
        started = time.monotonic()
        records = served.control(Control.SEAL)
        _failpoint("sealed")
        try:
            rebuild.engine.control(Control.FINISH, records)
            _failpoint("finished")
            self.layout.switch_to(rebuild.copy)
        except (OSError, EOFError, errors.StoreError) as exc:
            served.control(Control.UNSEAL)
            self._abandon(rebuild, f"handover failed: {exc}")
            return
        _failpoint("switched")
        # From here on the copy is the index: whatever befalls the old engine now, go on.
        with contextlib.suppress(OSError, EOFError, errors.StoreError):
            served.control(Control.RETIRE)
        self._served = rebuild.engine
        self._endpoint.set(rebuild.engine.socket)
        _failpoint("retired")
        self._rebuild = None
        self.phase = Phase.SERVING
        self.rebuilds += 1
        self._merge_owed = not rebuild.merge
        log.info(
            "%s %s in %.1f s; writes were held %.0f ms for the handover",
            rebuild.kind,
            rebuild.copy.name,
            time.monotonic() - rebuild.started,
            (time.monotonic() - started) * 1000,
        )
        served.stop(keep_facets=False)
        self.layout.remove_other_generations(keep=rebuild.copy)

    def _abandon(self, rebuild: Rebuild, why: str) -> None:
        self._drop(rebuild)
        self._failed(why)

    def _drop(self, rebuild: Rebuild) -> None:
        """Stop a rebuild: its engine killed, the served one's journal closed, the copy gone."""
        rebuild.engine.kill()
        served = self._served
        if served is not None and served.alive:
            with contextlib.suppress(OSError, EOFError, errors.StoreError):
                served.control(Control.STOP_COPY)
        self._rebuild = None
        self.phase = Phase.SERVING
        self._discard(rebuild.copy)

    def _failed(self, why: str) -> None:
        log.warning("rebuild abandoned (%s); the next try in %.0f s", why, RETRY_AFTER_FAILURE_S)
        self.last_failure = why
        self._retry_at = time.monotonic() + RETRY_AFTER_FAILURE_S

    def _discard(self, copy: Path) -> None:
        if copy == self.layout.current():  # never the generation in use, whatever went wrong
            log.error("not deleting %s: index.json names it", copy)
            return
        shutil.rmtree(copy, ignore_errors=True)
        for path in (IndexLayout.journal(copy), IndexLayout.facet_snapshot(copy)):
            path.unlink(missing_ok=True)

    def _stop_all(self) -> None:
        if self._rebuild is not None:
            self._drop(self._rebuild)
        self._endpoint.fail("the service is shutting down")
        if self._served is not None:
            self._served.stop()
