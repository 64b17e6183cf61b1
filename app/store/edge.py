"""Our in-process store: one Qdrant Edge shard, persisted under SEARCH_DATA_DIR/<collection>
(opened by `app.store.shard`, its facet index kept by `app.store.facet_upkeep`)."""

import json
import logging
import shutil
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import qdrant_edge as qe
from qdrant_client.http import models

from app.index_settings import IndexSettings
from app.store import facet_snapshot, fields, index_format, narrowing, quantization, translate
from app.store.base import Copied, Hit, Query, VectorIndex
from app.store.copies import check_room_for_copy, shard_copied
from app.store.errors import IndexConflict, StorageFull, guarded
from app.store.facet_upkeep import FacetUpkeep, documents_in
from app.store.fields import DENSE_VECTOR
from app.store.layout import INDEX_FILE, IndexLayout
from app.store.memo import ReadMemo, filter_key
from app.store.read_back import start_read_back
from app.store.shard import current_shard, ensure_payload_indexes, open_shard, place_payload_indexes

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
RESCORED = quantization.rescored()  # every other dense search (app.store.quantization)
DEFAULT_MIN_FREE_BYTES = 256 * 2**20  # a few WAL segments (32 MiB each) and segment growth
# A write as the store was asked for it (method name, arguments): what a rebuild replays.
WriteHook = Callable[[str, tuple[Any, ...]], None]


def _request(q: Query, exact: bool, edge_filter: qe.Filter | None) -> qe.QueryRequest:
    """Ids and scores only: payloads are read by id after (`EdgeStore._with_payloads`).
    `edge_filter`: `q.filter` as the engine takes it (`EdgeStore._engine_filter`)."""
    return qe.QueryRequest(
        limit=q.limit,
        offset=q.offset,
        query=translate.query(q.query, q.using),
        prefetches=[translate.prefetch(_rescored(p)) for p in q.prefetch] or None,
        filter=edge_filter,
        score_threshold=q.score_threshold,
        with_payload=False,
        params=EXACT if exact else _search_params(q.using),
    )


def _search_params(using: str | None) -> qe.SearchParams | None:
    return translate.search_params(RESCORED) if using == DENSE_VECTOR else None


def _rescored(prefetch: models.Prefetch) -> models.Prefetch:
    if prefetch.using != DENSE_VECTOR:
        return prefetch
    return prefetch.model_copy(update={"params": RESCORED})


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
        others. `check_settings`: see `shard.current_shard`. `facet_index`: facets and counts
        from memory (for serving; a one-shot command would only pay for loading them)."""
        self._layout = IndexLayout.of(data_dir, collection)
        self._path = shard or current_shard(self._layout, check_settings)
        self._min_free_bytes = min_free_bytes
        self._shard = open_shard(self._path, optimizers)
        if shard is None:
            self._layout.remove_other_generations(keep=self._path)
            self._layout.remove_backup_leftovers()
        self._write_lock = threading.Lock()
        # Writes begun and done: a search narrowed by the facet index (`_ask`) is asked again
        # if one began meanwhile, since the index takes a write after the shard does.
        self._writes_begun = self._writes_done = 0
        self.on_write: WriteHook | None = None  # called under the write lock after each write
        # Counts and facets scan every point under their filter; a search asks the same ones
        # for every query text (they depend on the filter only), and this process sees every
        # write (the directory is locked to it), so they are kept until the next write.
        self._memo = ReadMemo()
        self._filters = ReadMemo(size=64)  # the engine's filters; a narrowed one is large
        self._upkeep = FacetUpkeep(self._shard, self._path, self._write_lock, facet_index)
        self._facets = self._upkeep.facets
        self._closing = threading.Event()
        try:
            self.created_indexes = ensure_payload_indexes(self._shard)
        except IndexConflict:
            self._shard.close()  # release the directory lock before reporting
            raise
        self._upkeep.start()

    @property
    def min_free_bytes(self) -> int:
        return self._min_free_bytes

    @property
    def path(self) -> Path:
        """The shard generation this store has open."""
        return self._path

    def wait_for_facet_index(self, timeout: float | None = None) -> bool:
        """Whether facets and document counts come from memory (after the initial load)."""
        return self._upkeep.wait(timeout)

    @contextmanager
    def writes_paused(self) -> Iterator[None]:
        """No write runs or starts inside (reads go on): a consistent moment of the shard."""
        with self._write_lock:
            yield

    def flush(self) -> None:
        self._shard.flush()

    def save_facets(self, path: Path) -> bool:
        """The facet index as it is now, to `path` (inside `writes_paused`: the shard's
        state)."""
        return self._upkeep.save(path)

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
            touched_by=selector if reshapes else documents_in(selector),
        )

    @guarded()
    def delete(self, selector: models.Filter) -> None:
        edge_filter = translate.filter_(selector)
        operation = qe.UpdateOperation.delete_points_by_filter(edge_filter)
        self._update(operation, ("delete", (selector,)), touched_by=documents_in(selector))

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
            listed = self._upkeep.before_write(touched_by)
            ids = touched if touched is not None else listed
            self._writes_begun += 1
            try:
                self._shard.update(operation)
            finally:
                self._upkeep.after_write(ids)
                # After it: nothing read from the facet index before the write is kept.
                self._memo.invalidate()
                self._filters.invalidate()
                self._writes_done += 1
            if self.on_write is not None:
                self.on_write(*call)

    def query(self, q: Query) -> list[Hit]:
        return self.query_batch([q])[0]

    @guarded()
    def query_batch(self, queries: Sequence[Query]) -> list[list[Hit]]:
        return [
            self._with_payloads(scored, q.payload_keys)
            for scored, q in zip(self._ask(queries), queries, strict=True)
        ]

    def _ask(self, queries: Sequence[Query]) -> list[list[Any]]:
        """The engine's answers, each filter narrowed where the facet index pays (`narrowing`);
        asked again as they came if a write began meanwhile (the index may lag the shard)."""
        writes = self._writes_begun
        settled = writes == self._writes_done  # no write half done: the index is the shard's
        exact = [self._scored_exactly(q) for q in queries]
        filters = [self._engine_filter(q.filter, narrow=settled) for q in queries]
        answers = self._answers(queries, exact, [edge_filter for edge_filter, _ in filters])
        if self._writes_begun != writes and any(narrowed for _, narrowed in filters):
            answers = self._answers(queries, exact, [translate.filter_(q.filter) for q in queries])
        return answers

    def _answers(
        self, queries: Sequence[Query], exact: list[bool], filters: list[qe.Filter | None]
    ) -> list[list[Any]]:
        requests = [_request(*asked) for asked in zip(queries, exact, filters, strict=True)]
        return cast(
            list[list[Any]], self._shard.query_batch(qe.QueryBatchRequest(queries=requests))
        )

    def _engine_filter(
        self, selector: models.Filter | None, narrow: bool
    ) -> tuple[qe.Filter | None, bool]:
        """`selector` as the engine takes it, and whether it was narrowed to the documents it
        keeps; kept until the next write (one user's searches ask the same filter for every
        text, and in both branches)."""
        if selector is None or not narrow or not self._facets.ready:
            return translate.filter_(selector), False
        return self._filters.get(filter_key(selector), lambda: self._narrowed(selector))

    def _narrowed(self, selector: models.Filter) -> tuple[qe.Filter, bool]:
        keys = self._facets.documents_kept(selector, narrowing.MAX_DOCUMENTS, narrowing.NARROWER)
        if keys is None:
            return translate.filter_(selector), False
        return translate.filter_(narrowing.narrowed(selector, keys)), True

    def _scored_exactly(self, q: Query) -> bool:
        """A dense query whose filter keeps fewer than EXACT_BELOW_CHUNKS chunks (see there),
        counted by the facet index (kept until the next write), or by the engine while that
        index is still being loaded (the first seconds after an unclean stop: searches are
        answered meanwhile)."""
        selector = q.filter
        if q.using != DENSE_VECTOR or selector is None:
            return False
        if self._facets.loading:
            return self.count(selector) < EXACT_BELOW_CHUNKS
        fewer = self._memo.get(
            ("fewer", filter_key(selector)),
            lambda: self._facets.keeps_fewer(selector, EXACT_BELOW_CHUNKS),
        )
        return fewer is True

    def _with_payloads(self, scored: list[Any], payload_keys: Sequence[str] | None) -> list[Hit]:
        if payload_keys is not None and not payload_keys:
            return [Hit(id=str(p.id), score=float(p.score), payload={}) for p in scored]
        # Payloads come by id in a second call: a query that selects payload keys pays for the
        # selection per hit (hybrid, 100 hits at 100k points: 6.3 ms against 3.9 ms this way).
        payloads = {
            hit.id: hit.payload for hit in self._read([str(p.id) for p in scored], payload_keys)
        }
        return [
            Hit(id=id_, score=float(p.score), payload=payloads[id_])
            for p in scored
            if (id_ := str(p.id)) in payloads  # deleted between the two calls: gone
        ]

    @guarded()
    def retrieve(self, ids: Sequence[str], payload_keys: Sequence[str] | None = None) -> list[Hit]:
        return self._read(ids, payload_keys)

    def _read(self, ids: Sequence[str], payload_keys: Sequence[str] | None) -> list[Hit]:
        """The points by id. The keys grouping and ranking read (doc_type, doc_id, date) of a
        document's first chunk come from the facet index: the engine reads a point's whole
        payload for any key of it (~45 us a point; 200 candidates cost a document-granularity
        search 9 ms of CPU at 100k), and most candidates are first chunks where documents are
        short. The engine reads the rest."""
        recalled = self._facets.payloads(ids, payload_keys) if payload_keys else {}
        rest: list[int | uuid.UUID | str] = [id_ for id_ in ids if id_ not in recalled]
        selector = _selector(payload_keys)
        read = [_hit(p) for p in self._shard.retrieve(rest, selector, False)] if rest else []
        if not recalled:
            return read
        found = {hit.id: hit for hit in read}
        found |= {id_: Hit(id_, 0.0, payload) for id_, payload in recalled.items()}
        return [found[id_] for id_ in dict.fromkeys(ids) if id_ in found]

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
        request = qe.ScrollRequest(offset=offset, limit=limit, with_payload=True, with_vector=True)
        records, next_offset = self._shard.scroll(request)
        points = [_point_struct(r) for r in records]
        return points, None if next_offset is None else str(next_offset)

    @guarded()
    def count(self, filter: models.Filter | None = None) -> int:
        if filter is None:
            # Every point, from the segments' counters: the served shard never optimizes in
            # place, so they count each live point once. An exact count scans the points (~90
            # ms at 1M, again after every write): a status read or a metrics scrape held every
            # search that long while documents came in.
            return int(self._shard.info().points_count)
        if (documents := self._facets.count(filter)) is not None:
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

    # --- copies and the record ----------------------------------------------------------------

    def copy_to(self, target: Path, counted: Mapping[str, models.Filter | None]) -> Copied:
        """The shard generation in use, its facet snapshot and `index.json` naming it, with the
        counts of that moment; refused before anything is copied unless it fits."""
        target.mkdir(parents=True, exist_ok=True)
        check_room_for_copy(self, target, "a backup", "nothing was copied")
        with shard_copied(self, target / self._path.name):
            record = self._layout.record() | {"shard": self._path.name}
            (target / INDEX_FILE).write_text(json.dumps(record) + "\n", encoding="utf-8")
            return Copied({name: self.count(f) for name, f in counted.items()}, record)

    def scratch_dir(self) -> Path:
        staging = self._layout.backup_staging()
        staging.mkdir()
        return staging

    def written_with(self) -> IndexSettings:
        return index_format.recorded_settings(self._layout)

    def record_written_with(self, settings: IndexSettings) -> None:
        self.flush()
        self._layout.write_record({"settings": settings.to_record()})

    # --- the embedded engine's own upkeep -----------------------------------------------------

    def read_back(self) -> None:
        """Bring the shard's files back into the page cache, in the background (read_back)."""
        start_read_back(self._path, self._closing)

    def optimize(self) -> bool:
        """Merge segments and build the HNSW graph. Blocks and holds the GIL for minutes at
        100k points: for an offline window (`astrolabe-search optimize`) or a rebuild's copy,
        never the served shard."""
        with self._write_lock:
            place_payload_indexes(self._shard)
            return bool(self._shard.optimize())

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
        self._upkeep.stop()
        with self._write_lock:
            self._shard.flush()
            if keep_facets:
                facet_snapshot.save(self._facets, IndexLayout.facet_snapshot(self._path))
            if release:
                self._shard.close()
