"""The embedded engine: one Qdrant Edge shard, persisted under SEARCH_DATA_DIR/<collection>."""

import logging
import shutil
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import qdrant_edge as qe
from qdrant_client import models

from app.embeddings.dense import DIMENSION
from app.store import facet_snapshot, fields, index_format, translate
from app.store.base import Hit, Query, VectorIndex
from app.store.doc_facets import MEMBERSHIP, PAYLOAD_KEYS, DocumentFacets
from app.store.errors import (
    DataDirectoryInUse,
    DataDirectoryUnusable,
    IndexConflict,
    StorageFull,
    guarded,
)
from app.store.fields import (
    DENSE_VECTOR,
    PAYLOAD_INDEXES,
    PINNED_INDEXES,
    SPARSE_VECTOR,
    IndexType,
)
from app.store.index_format import IndexSettings
from app.store.layout import EDGE_CONFIG, IndexLayout
from app.store.memo import ReadMemo, filter_key
from app.store.read_back import start_read_back

log = logging.getLogger(__name__)

# A dense search whose filter keeps fewer chunks than this is scored exactly. Past the engine's
# own full-scan threshold (~6,700 vectors a segment) it walks the graph, whose payload-aware
# links follow one value at a time: a narrow combination of conditions is not connected in it.
# At 1M chunks two tags together (6,345 chunks) found none of the true 10 nearest through the
# graph, all of them exactly (30 ms). 10,000 leaves a single value's filter to the graph, whose
# links serve it (a category's 19,898 chunks: recall@10 0.95 in 7.7 ms, exactly 26 ms). The
# engine's threshold cannot be raised instead: it holds per segment (the live index's small
# ones would all be scanned) and decides which values get links. The facet index counts.
EXACT_BELOW_CHUNKS = 10_000
EXACT = qe.SearchParams(exact=True)
DEFAULT_MIN_FREE_BYTES = 256 * 2**20  # a few WAL segments (32 MiB each) and segment growth
# A write as the store was asked for it (method name, arguments): what a rebuild replays.
WriteHook = Callable[[str, tuple[Any, ...]], None]
_EDGE_TYPES = {
    IndexType.KEYWORD: qe.PayloadSchemaType.Keyword,
    IndexType.INTEGER: qe.PayloadSchemaType.Integer,
}


IndexParams = qe.KeywordIndexParams | qe.IntegerIndexParams


def _index_params(field: str) -> IndexParams:
    memory = qe.Memory.Pinned if field in PINNED_INDEXES else qe.Memory.Cached
    if PAYLOAD_INDEXES[field] is IndexType.KEYWORD:
        return qe.KeywordIndexParams(memory=memory)
    return qe.IntegerIndexParams(lookup=True, range=True, memory=memory)


def _placement(info: Any) -> Any:
    """Where an existing payload index lives (one created without parameters: in memory)."""
    return getattr(info.params, "memory", None) or qe.Memory.Pinned


def _request(
    q: Query, prefetch: Sequence[models.Prefetch] = (), offset: int = 0, exact: bool = False
) -> qe.QueryRequest:
    """Ids and scores only: payloads are read by id after (`EdgeStore._with_payloads`)."""
    return qe.QueryRequest(
        limit=q.limit,
        offset=offset,
        query=translate.query(q.query, q.using),
        prefetches=[translate.prefetch(p) for p in prefetch] or None,
        filter=translate.filter_(q.filter),
        score_threshold=q.score_threshold,
        with_payload=False,
        params=EXACT if exact else None,
    )


def _config(optimizers: qe.EdgeOptimizersConfig | None = None) -> qe.EdgeConfig:
    return qe.EdgeConfig(
        vectors={DENSE_VECTOR: qe.EdgeVectorParams(size=DIMENSION, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        optimizers=optimizers,
    )


def _hit(point: Any) -> Hit:
    score = getattr(point, "score", 0.0)
    return Hit(id=str(point.id), score=float(score), payload=dict(point.payload or {}))


def _selector(payload_keys: Sequence[str] | None) -> bool | list[str]:
    """None: the whole payload; empty: none; else these keys."""
    if payload_keys is None:
        return True
    return list(payload_keys) or False


def _point_key(id_: object) -> str:
    """A point id as the engine spells it back (UUIDs in canonical form)."""
    if isinstance(id_, int):
        return str(id_)
    try:
        return str(uuid.UUID(str(id_)))
    except ValueError:
        return str(id_)


def _point_struct(record: Any) -> models.PointStruct:
    vectors: dict[str, Any] = {}
    for name, value in (record.vector or {}).items():
        if isinstance(value, qe.SparseVector):
            vectors[name] = models.SparseVector(
                indices=list(value.indices), values=list(value.values)
            )
        else:
            vectors[name] = list(value)
    return models.PointStruct(id=str(record.id), vector=vectors, payload=dict(record.payload or {}))


def _open_shard(path: Path, optimizers: qe.EdgeOptimizersConfig | None = None) -> qe.EdgeShard:
    """Load the shard, or create it in a new or empty directory; anything else is refused with
    one line, and nothing in the directory is changed."""
    config_file = path / EDGE_CONFIG
    try:
        if path.is_dir() and any(path.iterdir()) and not config_file.exists():
            raise DataDirectoryUnusable(
                f"{path} holds files that are not an Astrolabe index: refusing to write into it"
                " (nothing was changed); point SEARCH_DATA_DIR or SEARCH_COLLECTION elsewhere"
            )
        path.mkdir(parents=True, exist_ok=True)
        if config_file.exists():
            return qe.EdgeShard.load(str(path), _config(optimizers))
        return qe.EdgeShard.create(str(path), _config(optimizers))
    except DataDirectoryUnusable:
        raise
    except Exception as exc:
        if "WouldBlock" in str(exc):
            raise DataDirectoryInUse(
                f"the data directory {path} is in use by another process (one process per"
                " directory: stop the other one, or use another SEARCH_DATA_DIR)"
            ) from exc
        raise DataDirectoryUnusable(
            f"cannot open the index in {path} (nothing was changed or deleted):"
            f" {type(exc).__name__}: {exc}"
        ) from exc


def current_shard(layout: IndexLayout, check_settings: bool = True) -> Path:
    """The generation to serve, after finishing an interrupted move of a format-1 shard and
    moving one that opens (a refused shard stays exactly where and as it is). An index written
    by a newer release, or (`check_settings`) with other settings, is refused before anything
    moves (`index_format`); without `check_settings` it is opened as it is (backup, reindex)."""
    layout.check()
    index_format.check_format(layout)
    layout.resume_migration()
    current = IndexSettings.current()
    if check_settings and layout.exists:
        index_format.refuse_other_settings(layout, current)
    if layout.legacy:
        _open_shard(layout.root).close()  # refused here, before anything moves
        layout.migrate_legacy()
    shard = layout.current()
    if check_settings:
        index_format.record_settings(layout, current)
    return shard


def _documents_in(selector: models.Filter) -> models.Filter:
    """The points of `selector` the facet index may hold a row for."""
    return models.Filter(must=[selector, *MEMBERSHIP])


class EdgeStore:
    backend = "embedded"

    def __init__(
        self,
        data_dir: Path,
        collection: str,
        min_free_bytes: int = DEFAULT_MIN_FREE_BYTES,
        facet_index: bool = True,
        *,
        shard: Path | None = None,
        optimizers: qe.EdgeOptimizersConfig | None = None,
        check_settings: bool = True,
    ) -> None:
        """Opens the generation in use (`index.json`), or `shard` (a rebuild's copy), and only
        then, as the owner of the index, deletes the generations and backup copies left by
        others. `check_settings`: see `current_shard`."""
        layout = IndexLayout.of(data_dir, collection)
        self._path = shard or current_shard(layout, check_settings)
        self._min_free_bytes = min_free_bytes
        self._shard = _open_shard(self._path, optimizers)
        if shard is None:
            layout.remove_other_generations(keep=self._path)
            layout.remove_backup_leftovers()
        self._write_lock = threading.Lock()
        self.on_write: WriteHook | None = None  # called under the write lock after each write
        # Counts and facets scan every point under their filter; a search asks the same ones
        # for every query text (they depend on the filter only), and this process sees every
        # write (the directory is locked to it), so they are kept until the next write.
        self._memo = ReadMemo()
        # Facets and per-document counts under any filter, from memory, exact after every write
        # (see doc_facets): from the snapshot the last close left, else read from the shard in
        # the background (the engine answers until then). Taken before any write: a snapshot
        # never outlives the state it describes.
        snapshot = IndexLayout.facet_snapshot(self._path)
        saved = facet_snapshot.take(snapshot) if facet_index else None
        self._facets = saved or DocumentFacets()
        # Without a facet index of its own (a one-shot command), the snapshot stays where it is
        # until the store's first write: a command that only reads (a backup), even killed,
        # leaves it as it found it.
        self._kept_snapshot = snapshot if not facet_index and snapshot.exists() else None
        if not facet_index:
            self._facets.abandon()
        self._closing = threading.Event()
        try:
            self.created_indexes = self._ensure_payload_indexes()
        except IndexConflict:
            self._shard.close()  # release the directory lock before reporting
            raise
        self._facet_loader = threading.Thread(
            target=self._load_facets, name="facet-index", daemon=True
        )
        if not self._facets.loaded:
            self._facet_loader.start()

    @property
    def min_free_bytes(self) -> int:
        return self._min_free_bytes

    @property
    def path(self) -> Path:
        """The shard generation this store has open."""
        return self._path

    def wait_for_facet_index(self, timeout: float | None = None) -> bool:
        """Whether facets and document counts come from memory (after the initial load)."""
        if self._facet_loader.ident is not None:
            self._facet_loader.join(timeout)
        return self._facets.ready

    @contextmanager
    def writes_paused(self) -> Iterator[None]:
        """No write runs or starts inside (reads go on): a consistent moment of the shard."""
        with self._write_lock:
            yield

    def flush(self) -> None:
        self._shard.flush()

    def save_facets(self, path: Path) -> bool:
        """The facet index as it is now, to `path` (inside `writes_paused`: the shard's state);
        without one, the snapshot this store kept, if it did."""
        if self._kept_snapshot is not None:
            shutil.copyfile(self._kept_snapshot, path)
            return True
        return facet_snapshot.save(self._facets, path)

    def _load_facets(self) -> None:
        """Every stored document into the facet index, a page at a time; each page is read and
        put under the write lock, so writes in between are never lost or undone."""
        request_filter = translate.filter_(models.Filter(must=list(MEMBERSHIP)))
        offset: Any = None
        try:
            while not self._closing.is_set() and not self._facets.abandoned:
                with self._write_lock:
                    if self._closing.is_set():
                        return
                    request = qe.ScrollRequest(
                        offset=offset, limit=256, filter=request_filter, with_payload=PAYLOAD_KEYS
                    )
                    records, offset = self._shard.scroll(request)
                    payloads = {str(r.id): dict(r.payload or {}) for r in records}
                    self._facets.refresh(payloads, payloads)
                if offset is None:
                    self._facets.loaded = True
                    return
        except Exception:
            log.exception("facet index not loaded: facets are counted by the engine")
            self._facets.abandon()

    def _ensure_payload_indexes(self) -> list[str]:
        """Create missing payload indexes; never replace one of another type."""
        existing = self._shard.info().payload_schema
        created = []
        for field, wanted in PAYLOAD_INDEXES.items():
            info = existing.get(field)
            if info is None:
                self._shard.update(
                    qe.UpdateOperation.create_field_index(field, _index_params(field))
                )
                created.append(field)
            elif info.data_type != _EDGE_TYPES[wanted]:
                raise IndexConflict(
                    f"payload index '{field}' exists as {info.data_type}, this service needs"
                    f" {wanted.value}: drop it or use a fresh collection"
                )
        return created

    def ensure_room(self, bytes_needed: int) -> None:
        """Refuse a new batch unless it fits with the whole reserve left free, so the documents
        already accepted can still be indexed into the lower half of the reserve."""
        self._check_room(self._min_free_bytes + bytes_needed)

    def _check_room(self, needed: int) -> None:
        """Qdrant Edge writes through memory maps: on a full disk the process dies of SIGBUS
        instead of raising, so the only safe write is one that never starts."""
        free = shutil.disk_usage(self._path).free
        if free < needed:
            raise StorageFull(
                f"the disk under the data directory is full ({free // 2**20} MiB free, the"
                f" service keeps {self._min_free_bytes // 2**20} MiB in reserve): nothing was"
                " written; free space and send again"
            )

    @guarded()
    def upsert(
        self, points: Sequence[models.PointStruct], condition: models.Filter | None = None
    ) -> None:
        if points:
            operation = qe.UpdateOperation.upsert_points(
                [translate.point(p) for p in points], condition=translate.filter_(condition)
            )
            self._update(
                operation,
                ("upsert", (points, condition)),
                touched=[_point_key(p.id) for p in points],
            )

    @guarded()
    def set_payload(self, payload: dict[str, Any], selector: models.Filter) -> None:
        edge_filter = translate.filter_(selector)
        # A payload that sets what makes a point a document may add rows: look at every point.
        reshapes = fields.KIND in payload or fields.CHUNK_INDEX in payload
        operation = qe.UpdateOperation.set_payload_by_filter(edge_filter, payload)
        self._update(
            operation,
            ("set_payload", (payload, selector)),
            touched_by=selector if reshapes else _documents_in(selector),
        )

    @guarded()
    def delete(self, selector: models.Filter) -> None:
        edge_filter = translate.filter_(selector)
        operation = qe.UpdateOperation.delete_points_by_filter(edge_filter)
        self._update(operation, ("delete", (selector,)), touched_by=_documents_in(selector))

    def _update(
        self,
        operation: qe.UpdateOperation,
        call: tuple[str, tuple[Any, ...]],
        touched: list[str] | None = None,
        touched_by: models.Filter | None = None,
    ) -> None:
        """Every write: refused below the floor (half the reserve), which only the documents
        already accepted may use. The points it may change (`touched`, or those matching
        `touched_by` before it) are read back into the facet index under the same lock; then
        `on_write` hears of it (`call`: the store method and its arguments)."""
        self._check_room(self._min_free_bytes // 2)
        with self._write_lock:
            ids = touched if touched is not None else self._ids(touched_by)
            if self._kept_snapshot is not None:  # no longer this shard's state
                self._kept_snapshot.unlink(missing_ok=True)
                self._kept_snapshot = None
            try:
                self._shard.update(operation)
            finally:
                self._memo.invalidate()
                self._refresh_facets(ids)
            if self.on_write is not None:
                self.on_write(*call)

    def _ids(self, selector: models.Filter | None) -> list[str]:
        if selector is None:
            return []
        ids: list[str] = []
        offset: Any = None
        edge_filter = translate.filter_(selector)
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=1024, filter=edge_filter, with_payload=False
            )
            records, offset = self._shard.scroll(request)
            ids.extend(str(r.id) for r in records)
            if offset is None:
                return ids

    def _refresh_facets(self, ids: list[str]) -> None:
        if not ids or self._facets.abandoned:
            return
        try:
            records = self._shard.retrieve(list[int | uuid.UUID | str](ids), PAYLOAD_KEYS, False)
            payloads = {str(r.id): dict(r.payload or {}) for r in records}
            self._facets.refresh(ids, payloads)
        except Exception:
            log.exception("facet index out of step: facets are counted by the engine from now on")
            self._facets.abandon()

    @guarded()
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
        asked = Query(query, limit, using, filter, score_threshold)
        request = _request(asked, prefetch, offset, self._scored_exactly(asked))
        return self._with_payloads(self._shard.query(request), payload_keys)

    @guarded()
    def query_batch(self, queries: Sequence[Query]) -> list[list[Hit]]:
        requests = [_request(q, exact=self._scored_exactly(q)) for q in queries]
        answers = self._shard.query_batch(qe.QueryBatchRequest(queries=requests))
        return [
            self._with_payloads(scored, q.payload_keys)
            for scored, q in zip(answers, queries, strict=True)
        ]

    def _scored_exactly(self, q: Query) -> bool:
        """A dense query whose filter keeps fewer than EXACT_BELOW_CHUNKS chunks (see there)."""
        if q.using != DENSE_VECTOR or q.filter is None:
            return False
        return self._facets.keeps_fewer(q.filter, EXACT_BELOW_CHUNKS) is True

    def _with_payloads(self, scored: list[Any], payload_keys: Sequence[str] | None) -> list[Hit]:
        if payload_keys is not None and not payload_keys:
            return [Hit(id=str(p.id), score=float(p.score), payload={}) for p in scored]
        # Payloads come by id in a second call: a query that selects payload keys pays for the
        # selection per hit (hybrid, 100 hits at 100k points: 6.3 ms against 3.9 ms this way).
        records = self._shard.retrieve([p.id for p in scored], _selector(payload_keys), False)
        payloads = {str(r.id): dict(r.payload or {}) for r in records}
        return [
            Hit(id=id_, score=float(p.score), payload=payloads[id_])
            for p in scored
            if (id_ := str(p.id)) in payloads  # deleted between the two calls: gone
        ]

    @guarded()
    def retrieve(self, ids: Sequence[str], payload_keys: Sequence[str] | None = None) -> list[Hit]:
        selector = _selector(payload_keys)
        return [_hit(p) for p in self._shard.retrieve(list(ids), selector, False)]

    @guarded()
    def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        records = self._shard.retrieve(list(ids), False, [DENSE_VECTOR])
        vectors = {str(r.id): r.vector[DENSE_VECTOR] for r in records if isinstance(r.vector, dict)}
        return {id_: cast(list[float], v) for id_, v in vectors.items() if isinstance(v, list)}

    @guarded()
    def scroll(self, filter: models.Filter, limit: int) -> list[Hit]:
        hits: list[Hit] = []
        offset: Any = None
        while len(hits) < limit:
            request = qe.ScrollRequest(
                offset=offset,
                limit=min(256, limit - len(hits)),
                filter=translate.filter_(filter),
                with_payload=True,
            )
            points, offset = self._shard.scroll(request)
            hits.extend(_hit(p) for p in points)
            if offset is None:
                break
        return hits

    @guarded()
    def scroll_page(
        self,
        filter: models.Filter,
        offset: str | None,
        limit: int,
        payload_keys: Sequence[str] | None = None,
    ) -> tuple[list[Hit], str | None]:
        request = qe.ScrollRequest(
            offset=offset,
            limit=limit,
            filter=translate.filter_(filter),
            with_payload=_selector(payload_keys),
        )
        records, next_offset = self._shard.scroll(request)
        return [_hit(r) for r in records], None if next_offset is None else str(next_offset)

    @guarded()
    def update_vectors(
        self, points: Sequence[models.PointVectors], condition: models.Filter | None = None
    ) -> None:
        ids = [_point_key(p.id) for p in points]
        existing = {str(r.id) for r in self._shard.retrieve(list(ids), False, False)}
        kept = [p for p, id_ in zip(points, ids, strict=True) if id_ in existing]
        if kept:
            operation = qe.UpdateOperation.update_vectors(
                [translate.point_vectors(p) for p in kept], condition=translate.filter_(condition)
            )
            # Vectors are no facet field: the facet index has nothing to read back.
            self._update(operation, ("update_vectors", (kept, condition)), touched=[])

    @guarded()
    def scroll_points(
        self, offset: str | None, limit: int
    ) -> tuple[list[models.PointStruct], str | None]:
        """One page of whole points (vectors and payload), in id order, from `offset` on; and the
        offset of the next page (None at the end). For copying the index elsewhere."""
        request = qe.ScrollRequest(offset=offset, limit=limit, with_payload=True, with_vector=True)
        records, next_offset = self._shard.scroll(request)
        points = [_point_struct(r) for r in records]
        return points, None if next_offset is None else str(next_offset)

    @guarded()
    def count(self, filter: models.Filter | None = None) -> int:
        if filter is not None and (documents := self._facets.count(filter)) is not None:
            return documents
        request = qe.CountRequest(exact=True, filter=translate.filter_(filter))
        return self._memo.get(("count", filter_key(filter)), lambda: self._shard.count(request))

    @guarded()
    def facet(self, key: str, filter: models.Filter, limit: int) -> dict[str, int]:
        if (counts := self._facets.facet(key, filter, limit)) is not None:
            return counts
        edge_filter = translate.filter_(filter)
        request = qe.FacetRequest(key=key, limit=limit, exact=True, filter=edge_filter)

        def read() -> dict[str, int]:
            return {str(hit.value): hit.count for hit in self._shard.facet(request)}

        return dict(self._memo.get(("facet", key, limit, filter_key(filter)), read))

    def read_back(self) -> None:
        """Bring the shard's files back into the page cache, in the background (read_back)."""
        start_read_back(self._path, self._closing)

    def optimize(self) -> bool:
        """Merge segments and build the HNSW graph. Blocks and holds the GIL for minutes at
        100k points: for an offline window (`astrolabe-search optimize`), never from `serve`."""
        with self._write_lock:
            self._place_payload_indexes()
            return bool(self._shard.optimize())

    def _place_payload_indexes(self) -> None:
        """Indexes made before PINNED_INDEXES (all in memory) are made again where it puts
        them: here, off the served path (a rebuild's copy, or offline), since it takes ~1 s per
        index at 100k chunks. Filters meanwhile fall back to reading payloads: still exact."""
        existing = self._shard.info().payload_schema
        for field in PAYLOAD_INDEXES:
            info = existing.get(field)
            wanted = _index_params(field)
            if info is None or _placement(info) == wanted.memory:
                continue
            self._shard.update(qe.UpdateOperation.delete_field_index(field))
            self._shard.update(qe.UpdateOperation.create_field_index(field, wanted))

    @guarded()
    def vector_index(self) -> VectorIndex:
        """Estimated from the engine's counters: every chunk has both vectors, sparse vectors
        are always indexed, so the dense vectors in HNSW graphs are the indexed vectors past one
        per chunk. Deleted and replaced points stay counted until the next optimize, so after
        deletes or re-sends this under-reports the plain part (never over-reports it). The
        chunks are the points the access rule's index holds (only a chunk carries readers):
        counting the points with a dense vector scanned every point, tens of ms at 1M chunks
        after each write, which searches waited for (the supervisor asks every 2 s)."""
        info = self._shard.info()
        chunks = info.payload_schema[fields.READERS].points  # created with the shard
        hnsw = min(chunks, max(0, info.indexed_vectors_count - chunks))
        return VectorIndex(hnsw=hnsw, plain=chunks - hnsw)

    def segments(self) -> dict[str, int]:
        info = self._shard.info()
        return {
            "segments": info.segments_count,
            "points": info.points_count,
            "indexed_vectors": info.indexed_vectors_count,
        }

    def close(self, keep_facets: bool = True, release: bool = True) -> None:
        """Flush and release the directory; the facet index is saved beside the shard for the
        next open (`keep_facets=False`: a retired generation, about to be deleted).
        `release=False` (a process about to end with `os._exit`) leaves the flushed shard
        open: Qdrant Edge's close drops the shard's files from the page cache, which the next
        start would then read back from the disk (its first searches wait for it). A flushed
        shard is persisted, as the engine documents; the lock goes with the process."""
        self._closing.set()
        if self._facet_loader.ident is not None:
            self._facet_loader.join()
        with self._write_lock:
            self._shard.flush()
            if keep_facets:
                facet_snapshot.save(self._facets, IndexLayout.facet_snapshot(self._path))
            if release:
                self._shard.close()
