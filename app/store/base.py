"""The store protocol: the only door to a search engine. Requests are `qdrant_client.models`;
failures leave a store as `app.store.errors` types."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from qdrant_client import models


@dataclass(frozen=True)
class Hit:
    """A point as the layers above the store see it."""

    id: str
    score: float
    payload: dict[str, Any]


@dataclass(frozen=True)
class VectorIndex:
    """Where the chunks' dense vectors are: in an HNSW graph, or in plain segments that a
    search scans exactly (their cost grows with their size); and, where the service rebuilds
    the graph while it serves, how many rebuilds it completed, whether one runs and the
    resident memory of the engine processes doing it, in bytes by role (`serving`, `rebuild`)."""

    hnsw: int
    plain: int
    rebuilds: int | None = None
    rebuilding: bool = False
    engine_memory: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Query:
    """One query of a batch (`Store.query_batch`), with `Store.query`'s arguments."""

    query: models.Query | None
    limit: int
    using: str | None = None
    filter: models.Filter | None = None
    score_threshold: float | None = None
    payload_keys: Sequence[str] | None = None


class Store(Protocol):
    backend: str

    def upsert(
        self, points: Sequence[models.PointStruct], condition: models.Filter | None = None
    ) -> None:
        """Insert or replace points; with `condition`, an existing point is only replaced if it
        matches it (atomically, per point)."""
        ...

    def set_payload(self, payload: dict[str, Any], selector: models.Filter) -> None:
        """Set these payload keys on every point matching `selector` (atomically, per point)."""
        ...

    def ensure_room(self, bytes_needed: int) -> None:
        """StorageFull unless `bytes_needed` more fit with the reserve kept free."""
        ...

    def delete(self, selector: models.Filter) -> None: ...

    def query(
        self,
        *,
        query: models.Query | None,
        using: str | None = None,
        prefetch: Sequence[models.Prefetch] = (),
        filter: models.Filter | None = None,
        limit: int,
        offset: int = 0,
        score_threshold: float | None = None,
        payload_keys: Sequence[str] | None = None,
    ) -> list[Hit]:
        """`payload_keys`: only these payload keys on the hits (None: the whole payload; empty:
        no payload, ids and scores only)."""
        ...

    def query_batch(self, queries: Sequence[Query]) -> list[list[Hit]]:
        """Several queries in one call (one round trip to an engine), the answers in order: a
        hybrid search's two branches."""
        ...

    def retrieve(self, ids: Sequence[str], payload_keys: Sequence[str] | None = None) -> list[Hit]:
        """The points with these ids that exist; `payload_keys` as in `query`."""
        ...

    def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]: ...

    def scroll(self, filter: models.Filter, limit: int) -> list[Hit]: ...

    def scroll_page(
        self,
        filter: models.Filter,
        offset: str | None,
        limit: int,
        payload_keys: Sequence[str] | None = None,
    ) -> tuple[list[Hit], str | None]:
        """One page of the points matching `filter`, in id order from `offset` on (None: the
        start), and the offset of the next page (None: this was the last). For passes over the
        whole index that resume where they stopped."""
        ...

    def update_vectors(
        self, points: Sequence[models.PointVectors], condition: models.Filter | None = None
    ) -> None:
        """Replace these named vectors of existing points, leaving their other vectors and
        payload as they are; with `condition`, a point is only changed if it matches it. A
        point that does not exist (any more) is skipped."""
        ...

    def count(self, filter: models.Filter | None = None) -> int: ...

    def facet(self, key: str, filter: models.Filter, limit: int) -> dict[str, int]: ...

    def vector_index(self) -> VectorIndex | None:
        """None: the engine builds its HNSW index by itself (a Qdrant server)."""
        ...

    def close(self) -> None: ...
