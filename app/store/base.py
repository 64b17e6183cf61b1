"""The store protocol: the only door to a search engine. Requests are `qdrant_client.http.models`;
failures leave a store as `app.store.errors` types."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from qdrant_client.http import models

from app.index_settings import IndexSettings


class Hit(NamedTuple):
    """A point as the layers above the store see it. A tuple: a search builds a hundred or more
    (every branch's candidates, then the fusion's), at 0.26 against 0.46 us each as a frozen
    dataclass."""

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
    """One search of the engine (`Store.query`, or one of a `Store.query_batch`).

    `query`: None scrolls in order (browse); `using`: the named vector it scores; `prefetch`:
    branches fused by `query` (a fusion query); `payload_keys`: only these payload keys on the
    hits (None: the whole payload; empty: none, ids and scores only)."""

    query: models.Query | None
    limit: int
    using: str | None = None
    filter: models.Filter | None = None
    score_threshold: float | None = None
    payload_keys: Sequence[str] | None = None
    prefetch: Sequence[models.Prefetch] = ()
    offset: int = 0


@dataclass(frozen=True)
class Copied:
    """What `Store.copy_to` copied: the counts it was asked for, at the moment of the copy, and
    the index's record (its format and the settings its data was written with; None on a
    Qdrant server, which records none)."""

    counts: dict[str, int]
    record: dict[str, Any] | None


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

    def query(self, q: Query) -> list[Hit]: ...

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

    def scroll_points(
        self, offset: str | None, limit: int
    ) -> tuple[list[models.PointStruct], str | None]:
        """One page of whole points (vectors and payload), in id order, from `offset` on; and
        the offset of the next page (None at the end). For copying the index elsewhere."""
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

    def copy_to(self, target: Path, counted: Mapping[str, models.Filter | None]) -> Copied:
        """A whole copy of the index in `target` (a new or empty directory) at one moment of its
        writes (writes wait, searches go on), with the number of points matching each of
        `counted`'s filters at that moment (None: every point). The embedded engine copies its
        shard, facet snapshot and record; a Qdrant server writes a snapshot of the collection,
        taken again while the collection changes under it. StorageFull where the copy would not
        fit beside the disk reserve, CopyFailed where none can be made: nothing is copied."""
        ...

    def scratch_dir(self) -> Path:
        """A new empty directory for a copy of this index (`copy_to`), on the disk of the index
        where it has one: left behind by a crash, it is removed at the next open."""
        ...

    def written_with(self) -> IndexSettings | None:
        """The settings the index records its data was written with (None: a Qdrant server,
        which records none)."""
        ...

    def record_written_with(self, settings: IndexSettings) -> None:
        """Record `settings` as those the index's data is written with, once every point written
        so far is durable (a no-op on a Qdrant server)."""
        ...

    def close(self) -> None: ...
