"""The files of a shard that the embedded engine never writes again, which a copy may share (a
hard link) instead of copying.

An optimize writes sealed segments: their dense vectors in one fixed memory map (`Mmap` or
`InRamMmap`, where the appendable segment's grow in chunks), their graph, sparse index and
storages written once. The engine never writes a sealed segment's data files again: a point
written again, or given a new payload or vector, moves to the appendable segment (Qdrant's copy
on write), a delete marks only the segment's id tracker, the trackers beside the data and the
deletion flags of its payload indexes, and a later optimize writes new segments and deletes the
old ones instead of rewriting them (`tests/store/test_sealed.py` holds the engine to each).
The data files (vectors, HNSW links, the sparse inverted index, the pages of the sparse vectors
and of the payloads, the payload indexes' values) are most of a sealed segment; the trackers
and flags, the appendable segment and the WAL are copied."""

import json
import re
from pathlib import Path

SEALED_STORAGE = frozenset({"Mmap", "InRamMmap"})
DATA_FILE = re.compile(
    r"vector_storage-[^/]+/matrix\.dat"
    r"|vector_index-[^/]+/(graph\.bin|links[^/]*\.bin|inverted_index\.dat)"
    r"|(vector_storage-[^/]+/store|payload_storage)/page_\d+\.dat"
    r"|payload_index/[^/]+/(point_to_values|values_to_points|data|data_block_index)\.bin"
)


def sealed(segment: Path) -> bool:
    """Whether `segment` (a directory under a shard's `segments/`) is one an optimize sealed."""
    try:
        config = json.loads((segment / "segment.json").read_text(encoding="utf-8"))["config"]
        storages = [vector["storage_type"] for vector in config["vector_data"].values()]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return bool(storages) and all(storage in SEALED_STORAGE for storage in storages)


def shareable_files(shard: Path) -> set[Path]:
    """The files under `shard` that the engine never writes again."""
    segments = shard / "segments"
    if not segments.is_dir():
        return set()
    return {
        path
        for segment in segments.iterdir()
        if segment.is_dir() and sealed(segment)
        for path in segment.rglob("*")
        if DATA_FILE.fullmatch(path.relative_to(segment).as_posix()) and path.is_file()
    }
