"""A rebuilt copy applying the served shard's journal as it grows (`journal`), through the same
store methods the writes first went through, so the copy's facet index follows too."""

import logging
import threading
from pathlib import Path

from app.store.edge import EdgeStore
from app.store.engine.journal import JournalReader
from app.store.errors import StoreError

log = logging.getLogger("astrolabe.shard_server")
REPLAY_PAUSE_S = 0.02  # how often a rebuilt copy looks for new journal records


class Replay:
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
