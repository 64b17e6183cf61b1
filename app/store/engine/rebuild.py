"""What a rebuild is and when one is due. A rebuild copies the served shard, builds the HNSW
graph of the copy in a second shard server (`optimize`, niced) and hands the index over to it
once it has caught up with the journal of the writes since the copy (`supervisor`).

    SERVING --(plain chunks >= threshold, or as many points written and replaced)--> BUILDING
    SERVING --(a rebuild done, then no write for MERGE_AFTER_IDLE_S, more than
               MERGED_SEGMENTS + 1 segments)--> BUILDING, a merge: the copy's segments are
               merged down to MERGED_SEGMENTS
    BUILDING --(caught up)--> HANDING_OVER --> SERVING on the copy
    any failure --> SERVING on the generation `index.json` names, the copy deleted"""

import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from app.store.base import VectorIndex
from app.store.engine.launch import MERGED_SEGMENTS
from app.store.engine.shard_process import ShardProcess

# Once writes pause this long after a rebuild, the index is merged down to MERGED_SEGMENTS: the
# rebuilds made while they arrived leave up to REBUILD_SEGMENTS, each searched on its own. A
# merge re-indexes every chunk (100 s of two cores at 100k), so a short pause does not start one.
MERGE_AFTER_IDLE_S = 120.0


class Phase(StrEnum):
    SERVING = "serving"
    BUILDING = "building"
    HANDING_OVER = "handing_over"


@dataclass
class Rebuild:
    engine: ShardProcess
    copy: Path
    merge: bool  # a merge of the segments the rebuilds left, not a graph for new chunks
    started: float = field(default_factory=time.monotonic)

    @property
    def kind(self) -> str:
        return "merged" if self.merge else "rebuilt"


@dataclass(frozen=True)
class Due:
    why: str  # for the log line: "<why> <generation>"
    merge: bool


def rebuild_due(
    index: VectorIndex,
    shape: dict[str, float],
    threshold: int,
    merge_owed: bool,
    merge_after_idle_s: float = MERGE_AFTER_IDLE_S,
) -> Due | None:
    """Whether the served shard (its `vector_index` and `Control.SHAPE`) needs a rebuild now.
    Points the served engine wrote that are gone again (a document's placeholder, the versions
    a document sent again replaced) stay in the appendable segment until a rebuild, though few
    chunks may be outside the graph; those still outside it are the written ones alive."""
    threshold = max(threshold, 1)
    replaced = int(shape["written"]) - index.plain
    if index.plain >= threshold:
        return Due(f"{index.plain} chunks outside the HNSW graph: rebuilding", merge=False)
    if replaced >= threshold:
        return Due(f"{replaced} points replaced since the last rebuild: rebuilding", merge=False)
    if merge_owed and shape["idle_s"] >= merge_after_idle_s and merge_still_owed(shape):
        return Due("writes paused: merging the index's segments into", merge=True)
    return None


def merge_still_owed(shape: dict[str, float]) -> bool:
    """More segments than a merge leaves (and the appendable one)."""
    return shape["segments"] > MERGED_SEGMENTS + 1
