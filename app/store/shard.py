"""Opening a Qdrant Edge shard: the generation `index.json` names (moving a format-1 shard into
one first), refusing with one line and changing nothing where the directory is foreign, locked,
damaged or written with other settings; then its payload indexes, created where missing and
placed where `fields.PINNED_INDEXES` says."""

import os
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from app.index_settings import DIMENSION, IndexSettings
from app.store import index_format
from app.store.errors import DataDirectoryInUse, DataDirectoryUnusable, IndexConflict
from app.store.fields import (
    DENSE_VECTOR,
    PAYLOAD_INDEXES,
    PINNED_INDEXES,
    SPARSE_VECTOR,
    IndexType,
)
from app.store.layout import EDGE_CONFIG, IndexLayout
from app.store.quantization import QUANTILE
from app.store.segments import max_segment_kb

EDGE_TYPES = {
    IndexType.KEYWORD: qe.PayloadSchemaType.Keyword,
    IndexType.INTEGER: qe.PayloadSchemaType.Integer,
}
IndexParams = qe.KeywordIndexParams | qe.IntegerIndexParams
# Pinned: the quantized vectors stay in RAM, the originals (read to rescore) in the page cache.
QUANTIZED = qe.ScalarQuantizationConfig(
    type=qe.ScalarType.Int8, quantile=QUANTILE, memory=qe.Memory.Pinned
)


def search_threads() -> int:
    """Qdrant Edge runs a call's per-segment searches on a pool of its own, 8 threads by default
    whatever the cores: one a core this process may use instead. Users' 100k index, 16 clients,
    seven alternated restarts with searches batched (17:14-17:21 UTC, load 2.4-3.9): higher in
    six, 184.4 against 179.6 searches/s (medians of the last four), 1 client 127.0 against
    123.6, engine CPU a search ~3 % less. One thread (no pool) was lower: 156.2 against 162.0."""
    return max(1, len(os.sched_getaffinity(0)))


def edge_config(optimizers: qe.EdgeOptimizersConfig | None = None) -> qe.EdgeConfig:
    """The shard's configuration, given at every open: Qdrant Edge checks that the stored
    vectors fit it and writes it over the stored one. A shard written before quantization
    keeps its segments as they are (and is searched as before) until an optimize re-indexes
    them quantized: a rebuild's copy, a merge, or `astrolabe-search optimize`."""
    dense = qe.EdgeVectorParams(
        size=DIMENSION, distance=qe.Distance.Cosine, quantization_config=QUANTIZED
    )
    return qe.EdgeConfig(
        vectors={DENSE_VECTOR: dense},
        sparse_vectors={SPARSE_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        optimizers=capped(optimizers),
        max_search_threads=search_threads(),
    )


def capped(optimizers: qe.EdgeOptimizersConfig | None) -> qe.EdgeOptimizersConfig:
    """The given optimizers' settings (the engine's defaults where None), with every join of
    segments (a merge, or new chunks indexed with an indexed segment) capped at
    `segments.max_segment_kb`."""
    given = optimizers or qe.EdgeOptimizersConfig()
    return qe.EdgeOptimizersConfig(
        deleted_threshold=given.deleted_threshold,
        vacuum_min_vector_number=given.vacuum_min_vector_number,
        default_segment_number=given.default_segment_number,
        max_segment_size=max_segment_kb(),
        indexing_threshold=given.indexing_threshold,
        prevent_unoptimized=given.prevent_unoptimized,
    )


def open_shard(path: Path, optimizers: qe.EdgeOptimizersConfig | None = None) -> qe.EdgeShard:
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
            return qe.EdgeShard.load(str(path), edge_config(optimizers))
        return qe.EdgeShard.create(str(path), edge_config(optimizers))
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
        open_shard(layout.root).close()  # refused here, before anything moves
        layout.migrate_legacy()
    shard = layout.current()
    if check_settings:
        index_format.record_settings(layout, current)
    return shard


def index_params(field: str) -> IndexParams:
    memory = qe.Memory.Pinned if field in PINNED_INDEXES else qe.Memory.Cached
    if PAYLOAD_INDEXES[field] is IndexType.KEYWORD:
        return qe.KeywordIndexParams(memory=memory)
    return qe.IntegerIndexParams(lookup=True, range=True, memory=memory)


def placement(info: Any) -> Any:
    """Where an existing payload index lives (one created without parameters: in memory)."""
    return getattr(info.params, "memory", None) or qe.Memory.Pinned


def ensure_payload_indexes(shard: qe.EdgeShard) -> list[str]:
    """Create missing payload indexes; never replace one of another type."""
    existing = shard.info().payload_schema
    created = []
    for field, wanted in PAYLOAD_INDEXES.items():
        info = existing.get(field)
        if info is None:
            shard.update(qe.UpdateOperation.create_field_index(field, index_params(field)))
            created.append(field)
        elif info.data_type != EDGE_TYPES[wanted]:
            raise IndexConflict.of_field(field, info.data_type, wanted.value)
    return created


def place_payload_indexes(shard: qe.EdgeShard) -> None:
    """Indexes made before PINNED_INDEXES (all in memory) are made again where it puts them:
    off the served path (a rebuild's copy, or offline), since it takes ~1 s per index at 100k
    chunks. Filters meanwhile fall back to reading payloads: still exact."""
    existing = shard.info().payload_schema
    for field in PAYLOAD_INDEXES:
        info = existing.get(field)
        wanted = index_params(field)
        if info is None or placement(info) == wanted.memory:
            continue
        shard.update(qe.UpdateOperation.delete_field_index(field))
        shard.update(qe.UpdateOperation.create_field_index(field, wanted))
