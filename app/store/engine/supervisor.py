"""The supervisor: starts the shard server that serves the generation in use, restarts it if it
dies, and drives rebuilds (`rebuild`) from one thread, which also starts every child (a child
dies with the thread that started it: PR_SET_PDEATHSIG). `store` is what the app uses.

Searches never wait for a rebuild: the copy's `optimize` holds another process, and the
handover holds only writes, for the few journal records the copy has not replayed yet:

    BUILDING: the served shard server copies its shard and journals its writes from then on;
        a second one optimizes the copy and replays the journal
    HANDING_OVER: writes held (seal); the copy replays to the end and flushes; `index.json`
        names it (the one atomic step); the old one retires (every call answers Moved), then
        exits

A kill -9 anywhere leaves `index.json` naming a complete generation: the old one until the
switch (every accepted write is in it), the new one after (it replayed every journaled write
before the switch). The next start deletes every other generation."""

import contextlib
import logging
import shutil
import subprocess
import threading
import time
from pathlib import Path

from app.config import Settings
from app.failpoints import failpoint
from app.store import errors
from app.store.base import VectorIndex
from app.store.engine.launch import MERGED_SEGMENTS, Launcher
from app.store.engine.process_store import Endpoint, ProcessStore
from app.store.engine.rebuild import MERGE_AFTER_IDLE_S, Phase, Rebuild, rebuild_due
from app.store.engine.shard_process import ShardProcess, resident_bytes
from app.store.engine.wire import Control
from app.store.layout import IndexLayout

log = logging.getLogger("astrolabe.supervisor")
POLL_S = 2.0  # how often the supervisor looks at the served shard server
CATCH_UP_POLL_S = 0.05
CAUGHT_UP_RECORDS = 16  # journal records a copy may lag when the handover starts
RETRY_AFTER_FAILURE_S = 300.0


class Supervisor:
    """Starts, watches and rebuilds the shard servers; `store` is what the app uses."""

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
        # never for an index an offline optimize left in many segments. Kept in index.json by
        # each handover, so that a restart soon after a load does not leave the load's segments
        # and unindexed chunks as they are until the next rebuild (users' 100k index: 1.24x the
        # engine's CPU a search); found paid at a pause, it is forgotten until the next start.
        self._merge_owed = self.layout.merge_owed
        self.phase = Phase.SERVING
        self.rebuilds = 0
        self.last_failure: str | None = None
        if launched is None:
            self._launcher = Launcher.of(settings)
            self._first: subprocess.Popen[str] | None = None
        else:
            self._launcher, self._first = launched
        self._socket_number = 0
        self._endpoint = Endpoint()
        self.store = ProcessStore(self._endpoint, self._launcher.key, self)
        self._served: ShardProcess | None = None
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
            role: resident_bytes(engine.process.pid)
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

    def _launch(self, copy: Path | None = None, segments: int | None = None) -> ShardProcess:
        self._socket_number += 1
        socket = self._launcher.socket(self._socket_number)
        if self._first is not None and copy is None:  # launched by `serve` on socket 1
            process, self._first = self._first, None
        else:
            process = self._launcher.launch(socket, copy, segments)
        return ShardProcess.watch(process, socket, self._launcher.key, copy)

    def _start_served(self) -> ShardProcess:
        """Launch the served engine; its address is published once it listens (it may already:
        `serve` launched the first one early, so it is made the served one before watching)."""
        engine = self._served = self._launch()
        threading.Thread(target=self._publish_when_ready, args=(engine,), daemon=True).start()
        return engine

    def _publish_when_ready(self, engine: ShardProcess) -> None:
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

    def _recover(self, served: ShardProcess) -> None:
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

    def _maybe_rebuild(self, served: ShardProcess) -> None:
        if not served.ready.is_set() or time.monotonic() < self._retry_at:
            return
        index = served.control("vector_index")
        if not isinstance(index, VectorIndex):
            return
        shape = served.control(Control.SHAPE)
        due = rebuild_due(index, shape, self.threshold, self._merge_owed, self.merge_after_idle_s)
        if due is None:
            if self._merge_owed and shape["idle_s"] >= self.merge_after_idle_s:
                self._merge_owed = False  # writes paused on few segments: nothing to merge
            return
        copy = self.layout.next_generation()
        log.info("%s %s", due.why, copy.name)
        self._start_rebuild(served, copy, due.merge)

    def _start_rebuild(self, served: ShardProcess, copy: Path, merge: bool) -> None:
        try:
            served.control(Control.START_COPY, str(copy))
        except errors.StoreError as exc:
            self._failed(f"rebuild not started: {exc.message}")
            self._discard(copy)
            return
        failpoint("copied")
        engine = self._launch(copy, MERGED_SEGMENTS if merge else None)
        self._rebuild = Rebuild(engine, copy, merge)
        self.phase = Phase.BUILDING

    def _advance(self, served: ShardProcess, rebuild: Rebuild) -> None:
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
            failpoint("caught_up")
            self._hand_over(served, rebuild)

    def _hand_over(self, served: ShardProcess, rebuild: Rebuild) -> None:
        self.phase = Phase.HANDING_OVER
        started = time.monotonic()
        records = served.control(Control.SEAL)
        failpoint("sealed")
        try:
            rebuild.engine.control(Control.FINISH, records)
            failpoint("finished")
            self.layout.switch_to(rebuild.copy, merge_owed=not rebuild.merge)
        except (OSError, EOFError, errors.StoreError) as exc:
            served.control(Control.UNSEAL)
            self._abandon(rebuild, f"handover failed: {exc}")
            return
        failpoint("switched")
        # From here on the copy is the index: whatever befalls the old engine now, go on.
        with contextlib.suppress(OSError, EOFError, errors.StoreError):
            served.control(Control.RETIRE)
        self._served = rebuild.engine
        self._endpoint.set(rebuild.engine.socket)
        failpoint("retired")
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
