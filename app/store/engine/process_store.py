"""`ProcessStore`: the `Store` that speaks the wire to the shard server serving now, for the layers
above the store, which never learn that a process exists. Each thread keeps its own connection
to it (`Endpoint`); when that shard server hands over or restarts, a call waits for the next one
and is sent again (every store write is idempotent: an upsert or delete applied twice
leaves what one leaves, and a write answered Moved was not applied).

Counts, facets and points' payloads are kept here until the next write (`ReadMemo`): every
write to the index goes through this process, so a kept answer is the exact one, and a search
saves the round trip of its count (a search with facets, five more; a page read before, its
payloads)."""

import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from multiprocessing.connection import Client, Connection
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from qdrant_client.http import models

from app.index_settings import IndexSettings
from app.store.base import Copied, Hit, Query, VectorIndex
from app.store.engine.wire import (
    PROTOCOL,
    WRITES,
    Call,
    Control,
    Failure,
    Moved,
    raise_failure,
    unpacked,
)
from app.store.errors import EngineUnavailable
from app.store.memo import ReadMemo, filter_key

T = TypeVar("T")
# Points' payloads kept until the next write (`retrieve`): a repeated search, or the next page
# of one, reads its page without asking the engine. At ~2 KB a chunk's payload, ~8 MB at most.
POINTS_KEPT = 4096
PointKey = tuple[str, tuple[str, ...] | None]  # a point and the payload keys read of it
SWITCH_WAIT_S = 15.0  # how long a call waits for the next engine (a restart after a crash)
ATTEMPTS = 4


class Endpoint:
    """Where the engine serving now listens; a version per change, so connections to a retired
    engine are dropped."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.address: str | None = None
        self.version = 0
        self.failure: str | None = None  # the engine cannot start: calls fail with this

    def set(self, address: str) -> None:
        with self._changed:
            self.address = address
            self.version += 1
            self.failure = None
            self._changed.notify_all()

    def fail(self, message: str) -> None:
        with self._changed:
            self.address = None
            self.failure = message
            self._changed.notify_all()

    def clear(self) -> None:
        """The engine went away; the next one will be `set`."""
        with self._changed:
            self.address = None
            self.version += 1
            self._changed.notify_all()

    def wait(self, newer_than: int, first_time: bool) -> tuple[str, int]:
        """An address newer than version `newer_than` (or the current one if it is newer);
        before the first engine is ready, as long as it takes."""
        with self._changed:
            ready = self._changed.wait_for(
                lambda: (
                    self.failure is not None
                    or (self.address is not None and self.version > newer_than)
                ),
                timeout=None if first_time else SWITCH_WAIT_S,
            )
            if self.failure is not None:
                raise EngineUnavailable(f"the search engine could not start: {self.failure}")
            if not ready or self.address is None:
                raise EngineUnavailable("the search engine is restarting")
            return self.address, self.version


class Supervisor(Protocol):
    """What owns the shard servers' processes (`supervisor.Supervisor`)."""

    rebuilds: int

    @property
    def rebuilding(self) -> bool: ...

    def engine_memory(self) -> dict[str, int]: ...

    def close(self) -> None: ...


class _Link(threading.local):
    connection: Connection | None = None
    version = 0


class ProcessStore:
    backend = "embedded"

    def __init__(self, endpoint: Endpoint, key: bytes, supervisor: Supervisor) -> None:
        self._endpoint = endpoint
        self._key = key
        self._supervisor = supervisor
        self._link = _Link()
        self._ever_ready = threading.Event()
        self._memo = ReadMemo()
        self._points = ReadMemo(POINTS_KEPT)

    def _current(self) -> Connection:
        """This thread's connection to the engine serving now: a new one after a switch."""
        link = self._link
        if link.connection is not None and link.version == self._endpoint.version:
            return link.connection
        self._drop()
        address, link.version = self._endpoint.wait(
            link.version, first_time=not self._ever_ready.is_set()
        )
        connection = Client(address, "AF_UNIX", authkey=self._key)
        connection.send(Call(Control.HELLO, (PROTOCOL,)))
        reply = connection.recv()
        if isinstance(reply, Failure):
            connection.close()
            raise_failure(reply)
        self._ever_ready.set()
        link.connection = connection
        return connection

    def _drop(self) -> None:
        if self._link.connection is not None:
            self._link.connection.close()
            self._link.connection = None

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """One store call on the engine serving now; sent again to the next engine when this
        one went away or handed over (waiting for it: SWITCH_WAIT_S at most)."""
        if method not in WRITES:
            return self._send(method, args, kwargs)
        self._forget()  # a read running now is not kept either
        try:
            return self._send(method, args, kwargs)
        finally:
            self._forget()

    def _forget(self) -> None:
        self._memo.invalidate()
        self._points.invalidate()

    def _send(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        for _ in range(ATTEMPTS):
            try:
                connection = self._current()
                connection.send(Call(method, args, kwargs))
                reply = connection.recv()
            except (EOFError, OSError):  # gone mid-call, or not listening any more
                self._drop()
                continue
            if not isinstance(reply, Failure):
                return unpacked(reply)
            try:
                raise_failure(reply)
            except Moved:
                self._drop()
        raise EngineUnavailable("the search engine is switching over: try again")

    def _typed(self, kind: type[T], method: str, *args: Any, **kwargs: Any) -> T:
        return cast(T, self.call(method, *args, **kwargs))

    # --- the Store protocol -----------------------------------------------------------------

    def upsert(
        self, points: Sequence[models.PointStruct], condition: models.Filter | None = None
    ) -> None:
        self.call("upsert", list(points), condition)

    def set_payload(self, payload: dict[str, Any], selector: models.Filter) -> None:
        self.call("set_payload", payload, selector)

    def ensure_room(self, bytes_needed: int) -> None:
        self.call("ensure_room", bytes_needed)

    def delete(self, selector: models.Filter) -> None:
        self.call("delete", selector)

    def query(self, q: Query) -> list[Hit]:
        return self._typed(list, "query", q)

    def query_batch(self, queries: Sequence[Query]) -> list[list[Hit]]:
        return self._typed(list, "query_batch", list(queries))

    def retrieve(self, ids: Sequence[str], payload_keys: Sequence[str] | None = None) -> list[Hit]:
        keys = None if payload_keys is None else tuple(payload_keys)

        def read(missing: list[PointKey]) -> dict[PointKey, Hit]:
            asked = [point for point, _ in missing]
            hits = self._typed(list, "retrieve", asked, None if keys is None else list(keys))
            return {(hit.id, keys): hit for hit in hits}

        kept = self._points.get_each([(point, keys) for point in ids], read)
        return [kept[(point, keys)] for point in ids if (point, keys) in kept]

    def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        return self._typed(dict, "dense_vectors", list(ids))

    def scroll(self, filter: models.Filter, limit: int) -> list[Hit]:
        return self._typed(list, "scroll", filter, limit)

    def scroll_page(
        self,
        filter: models.Filter,
        offset: str | None,
        limit: int,
        payload_keys: Sequence[str] | None = None,
    ) -> tuple[list[Hit], str | None]:
        keys = None if payload_keys is None else list(payload_keys)
        return self._typed(tuple, "scroll_page", filter, offset, limit, keys)

    def scroll_points(
        self, offset: str | None, limit: int
    ) -> tuple[list[models.PointStruct], str | None]:
        return self._typed(tuple, "scroll_points", offset, limit)

    def update_vectors(
        self, points: Sequence[models.PointVectors], condition: models.Filter | None = None
    ) -> None:
        self.call("update_vectors", list(points), condition)

    def count(self, filter: models.Filter | None = None) -> int:
        key = ("count", filter_key(filter))
        return self._memo.get(key, lambda: self._typed(int, "count", filter))

    def facet(self, key: str, filter: models.Filter, limit: int) -> dict[str, int]:
        def read() -> dict[str, int]:
            return self._typed(dict, "facet", key, filter, limit)

        return dict(self._memo.get(("facet", key, limit, filter_key(filter)), read))

    def vector_index(self) -> VectorIndex | None:
        index = self._typed(VectorIndex, "vector_index")
        supervisor = self._supervisor
        return replace(
            index,
            rebuilds=supervisor.rebuilds,
            rebuilding=supervisor.rebuilding,
            engine_memory=supervisor.engine_memory(),
        )

    def copy_to(self, target: Path, counted: Mapping[str, models.Filter | None]) -> Copied:
        return self._typed(Copied, "copy_to", target, dict(counted))

    def scratch_dir(self) -> Path:
        return self._typed(Path, "scratch_dir")

    def written_with(self) -> IndexSettings | None:
        return cast(IndexSettings | None, self.call("written_with"))

    def record_written_with(self, settings: IndexSettings) -> None:
        self.call("record_written_with", settings)

    def close(self) -> None:
        self._drop()
        self._supervisor.close()
