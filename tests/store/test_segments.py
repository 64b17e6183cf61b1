"""No segment of the embedded index grows past the cap (app/store/segments.py): a bulk load
builds a segment's graph each time the cap's chunks are outside it, and the engine's merges stop
short of joining full segments while they still fold small ones. The cap is lowered to 40 chunks
here: the engine joins segments only while the result stays under 40."""

from pathlib import Path

import pytest
import qdrant_edge as qe

from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.store import segments
from app.store.edge import EdgeStore
from app.store.engine.shard_server import open_shard_store
from app.store.open import build_full_segment, build_graph
from tests.helpers import doc

CAP = 40
BATCH = 20


@pytest.fixture(autouse=True)
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segments, "SEGMENT_CHUNKS", CAP)


def load(
    store: EdgeStore, first: int, count: int, keep_cap: bool = True, batch_size: int = BATCH
) -> list[bool]:
    """`count` one-chunk documents in batches, as `ingest` writes them; whether each batch
    built a segment's graph."""
    indexer = Indexer(store, HashingEncoder(), Bm25Encoder())
    built = []
    for start in range(first, first + count, batch_size):
        batch = [doc(str(n)) for n in range(start, start + batch_size)]
        indexer.index(indexer.accept(validate_batch(batch)))
        built.append(keep_cap and build_full_segment(store))
    return built


def open_command_store(data_dir: Path) -> EdgeStore:
    """As `ingest` opens it, but every segment indexed (the engine's own threshold is ~6,500
    chunks)."""
    every_segment = qe.EdgeOptimizersConfig(indexing_threshold=1)
    return EdgeStore(data_dir, Settings().collection, optimizers=every_segment)


def test_a_bulk_load_builds_a_graph_each_time_a_segment_is_full(tmp_path: Path) -> None:
    store = open_command_store(tmp_path)
    try:
        assert load(store, 0, 100) == [False, True, False, True, False]
        build_graph(store)  # the load's last graph, as `ingest` builds it
        assert store.vector_index().plain == 0
        # 40 + 40 + 20 in graphs, and the engine's empty appendable segment: the 20 stay apart,
        # since 60 chunks would pass the cap (the 101st point is the BM25 fit's record)
        assert store.segments() == {"segments": 4, "points": 101, "indexed_vectors": 200}
    finally:
        store.close()


def test_without_the_rule_a_bulk_load_is_one_segment(tmp_path: Path) -> None:
    """The control of the test above: the engine never splits the segment a load wrote."""
    store = open_command_store(tmp_path)
    try:
        load(store, 0, 100, keep_cap=False)
        build_graph(store)
        assert store.segments()["segments"] == 2
    finally:
        store.close()


@pytest.mark.parametrize("cap", [CAP, 1_000], ids=["capped", "control"])
def test_new_chunks_never_join_a_full_segment_and_a_merge_keeps_them_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: int
) -> None:
    store = open_command_store(tmp_path)
    try:
        load(store, 0, 80)  # two full segments
        # what a rebuild indexes: a few new chunks, beside the full segments, not joined to one
        # (which would re-index it)
        load(store, 80, 5, batch_size=5)
        build_graph(store)
        assert store.segments()["segments"] == 4
        load(store, 85, 5, batch_size=5)  # and small segments fold into each other
        build_graph(store)
        assert store.segments()["segments"] == 4
        shard = store._path
    finally:
        store.close()
    # The supervisor's merge: a copy whose segments merge down to as few as the cap allows
    monkeypatch.setattr(segments, "SEGMENT_CHUNKS", cap)
    merged = open_shard_store(tmp_path, Settings().collection, 0, copy=shard, segments=1)
    try:
        merged.optimize()
        shape = merged.segments()
        assert shape["points"] == 91 and merged.vector_index().plain == 0
        assert shape["segments"] == (4 if cap == CAP else 2)
    finally:
        merged.close()
