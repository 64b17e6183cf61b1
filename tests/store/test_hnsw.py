"""A shard with a real HNSW graph (past the engine's indexing threshold of ~6,700 vectors):
writes after `optimize()` land in plain segments beside it, and every answer stays right; the
status and the estimate of what is indexed follow."""

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from qdrant_client.http import models

from app.auth import Principal
from app.embeddings.dense import HashingEncoder
from app.filters.conditions import search_filter
from app.filters.spec import FilterSpec
from app.store import edge
from app.store.base import Query
from app.store.edge import EdgeStore
from app.store.facet_upkeep import FacetUpkeep
from app.store.fields import (
    CHUNK_INDEX,
    DENSE_VECTOR,
    DOC_KEY,
    KIND,
    KIND_CHUNK,
    READERS,
    SPARSE_VECTOR,
    TOTAL_CHUNKS,
)
from app.store.layout import IndexLayout
from tests.helpers import auth, running_app
from tests.store.vectors import point_id, unit_vectors

INDEXED = 7_000  # above the engine's indexing threshold (10,000 KB of 384-d float32 vectors)


def _points(ns: range, vectors: np.ndarray, version: int = 0) -> list[models.PointStruct]:
    return [
        models.PointStruct(
            id=point_id(n),
            vector={
                DENSE_VECTOR: vector.tolist(),
                SPARSE_VECTOR: models.SparseVector(indices=[n % 50], values=[1.0]),
            },
            payload={
                KIND: KIND_CHUNK,
                DOC_KEY: f"doc{n}",
                READERS: ["user:alice"],
                CHUNK_INDEX: 0,  # each point a document of one chunk, as the indexer writes it
                TOTAL_CHUNKS: 1,
                "group": n % 20,
                "version": version,
            },
        )
        for n, vector in zip(ns, vectors, strict=True)
    ]


@pytest.fixture(scope="module")
def optimized(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory holding INDEXED chunks, optimized once for the module (a few seconds)."""
    root = tmp_path_factory.mktemp("hnsw")
    store = EdgeStore(root, "c")
    vectors = unit_vectors(np.random.default_rng(1), INDEXED)
    for start in range(0, INDEXED, 1_000):
        ns = range(start, start + 1_000)
        store.upsert(_points(ns, vectors[start : start + 1_000]))
    assert store.vector_index().plain == INDEXED
    store.optimize()
    store.close()
    np.save(root / "vectors.npy", vectors)
    return root


def _copy(optimized: Path, root: Path) -> Path:
    shutil.copytree(optimized / "c", root / "c")
    return root


@pytest.fixture
def store(optimized: Path, tmp_path: Path) -> Iterator[EdgeStore]:
    opened = EdgeStore(_copy(optimized, tmp_path), "c")
    yield opened
    opened.close()


def _top(store: EdgeStore, vector: np.ndarray, flt: models.Filter | None = None) -> list[str]:
    hits = store.query(
        Query(
            query=models.NearestQuery(nearest=vector.tolist()),
            using=DENSE_VECTOR,
            filter=flt,
            limit=10,
        )
    )
    return [hit.id for hit in hits]


def _group(value: int) -> models.Filter:
    return models.Filter(
        must=[models.FieldCondition(key="group", match=models.MatchValue(value=value))]
    )


def test_optimize_builds_the_graph_and_the_estimate_counts_it(store: EdgeStore) -> None:
    assert store.vector_index().hnsw == INDEXED
    assert store.vector_index().plain == 0


def test_writes_after_optimize_are_found_and_deleted_or_replaced_ones_never_are(
    store: EdgeStore, optimized: Path
) -> None:
    indexed = np.load(optimized / "vectors.npy")
    rng = np.random.default_rng(2)
    new = unit_vectors(rng, 50)
    store.upsert(_points(range(INDEXED, INDEXED + 50), new))
    assert store.vector_index().plain == 50  # new points only: the estimate is exact

    deleted = range(0, 50)
    store.delete(models.Filter(must=[models.HasIdCondition(has_id=[point_id(n) for n in deleted])]))
    resent = range(100, 150)
    replaced = unit_vectors(rng, 50)
    store.upsert(_points(resent, replaced, version=1))

    assert store.count() == INDEXED  # +50 new, -50 deleted
    for n, vector in zip(range(INDEXED, INDEXED + 50), new, strict=True):
        assert _top(store, vector)[0] == point_id(n)
        assert _top(store, vector, _group(n % 20))[0] == point_id(n)
    for n in deleted:
        assert point_id(n) not in _top(store, indexed[n])
        assert point_id(n) not in _top(store, indexed[n], _group(n % 20))
    for n, vector in zip(resent, replaced, strict=True):
        hits = store.query(
            Query(query=models.NearestQuery(nearest=vector.tolist()), using=DENSE_VECTOR, limit=10)
        )
        assert hits[0].id == point_id(n) and hits[0].payload["version"] == 1
        assert hits[0].score == pytest.approx(1.0, abs=1e-4)
        old = store.query(
            Query(
                query=models.NearestQuery(nearest=indexed[n].tolist()), using=DENSE_VECTOR, limit=10
            )
        )
        stale = [h for h in old if h.id == point_id(n)]
        assert all(h.score < 0.999 for h in stale)  # the old vector is gone with the old version
    for n in range(200, 260):  # untouched points of the graph are still found
        assert _top(store, indexed[n])[0] == point_id(n)
        assert all(int(_id[-12:]) % 20 == n % 20 for _id in _top(store, indexed[n], _group(n % 20)))

    # Deleted and replaced points stay in the engine's counters: the plain part is a lower bound.
    assert store.vector_index().plain <= 100
    store.optimize()
    for n, vector in zip(resent, replaced, strict=True):
        assert _top(store, vector)[0] == point_id(n)
    for n in deleted:
        assert point_id(n) not in _top(store, indexed[n])


def test_a_narrow_dense_search_is_scored_exactly_while_the_facet_index_loads(
    optimized: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an unclean stop (no facet snapshot) the facet index is read back from the shard
    while the engine already answers: until it is loaded, the engine counts the filter."""
    root = _copy(optimized, tmp_path)
    IndexLayout.facet_snapshot(IndexLayout.of(root, "c").current()).unlink(missing_ok=True)
    release = threading.Event()
    load = FacetUpkeep._load

    def held(upkeep: FacetUpkeep) -> None:
        release.wait(timeout=60)
        load(upkeep)

    monkeypatch.setattr(FacetUpkeep, "_load", held)
    store = EdgeStore(root, "c")
    try:
        recording = _Recording(store._shard)
        monkeypatch.setattr(store, "_shard", recording)
        readable = search_filter(Principal("alice"), FilterSpec()).selector()
        indexed = np.load(optimized / "vectors.npy")
        query = unit_vectors(np.random.default_rng(5), 1)[0]
        exact = np.argsort(-(indexed @ query))[:10]
        assert not store.wait_for_facet_index(timeout=0)
        assert _top(store, query, readable) == [point_id(int(n)) for n in exact]
        assert recording.requests[-1].params.exact
        monkeypatch.setattr(edge, "EXACT_BELOW_CHUNKS", INDEXED)  # all 7,000 kept: not fewer
        _top(store, query, readable)
        # The graph, rescored (app.store.quantization), not an exact scan.
        assert not recording.requests[-1].params.exact
    finally:
        release.set()
        store.close()


def test_status_reports_indexed_and_unindexed_chunks(optimized: Path, tmp_path: Path) -> None:
    store = EdgeStore(_copy(optimized, tmp_path), "c")
    store.upsert(_points(range(INDEXED, INDEXED + 30), unit_vectors(np.random.default_rng(3), 30)))
    store.close()
    with running_app(tmp_path, HashingEncoder(), collection="c") as client:
        status = client.get("/api/v1/status", headers=auth()).json()
    assert (status["hnsw_chunks"], status["unindexed_chunks"]) == (INDEXED, 30)
    assert status["chunks"] == INDEXED + 30


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect")
def test_status_on_a_qdrant_server_reports_no_estimate(tmp_path: Path) -> None:
    with running_app(tmp_path, HashingEncoder(), qdrant_url=":memory:") as client:
        status = client.get("/api/v1/status", headers=auth()).json()
    assert status["backend"] == "server"
    assert status["hnsw_chunks"] is None and status["unindexed_chunks"] is None


class _Recording:
    """The engine's shard, recording the query requests it is sent (the store sends every
    search in a batch)."""

    def __init__(self, shard: Any) -> None:
        self.shard = shard
        self.requests: list[Any] = []

    def query_batch(self, request: Any) -> Any:
        self.requests.extend(request.queries)
        return self.shard.query_batch(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.shard, name)


def test_a_dense_search_whose_filter_keeps_few_chunks_is_scored_exactly(
    store: EdgeStore, optimized: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the engine's full-scan threshold (~6,700 here) the graph is walked, which misses
    the nearest of a narrow combination of conditions at 1M chunks: below EXACT_BELOW_CHUNKS,
    counted by the facet index, the engine is asked for an exact search."""
    recording = _Recording(store._shard)
    monkeypatch.setattr(store, "_shard", recording)
    readable = search_filter(Principal("alice"), FilterSpec()).selector()
    indexed = np.load(optimized / "vectors.npy")
    for query in unit_vectors(np.random.default_rng(5), 5):
        exact = np.argsort(-(indexed @ query))[:10]
        assert _top(store, query, readable) == [point_id(int(n)) for n in exact]
        assert recording.requests[-1].params.exact
    monkeypatch.setattr(edge, "EXACT_BELOW_CHUNKS", INDEXED)  # all 7,000 kept: not fewer
    store._memo.invalidate()  # the count against the old threshold is kept until a write
    _top(store, indexed[0], readable)
    assert not recording.requests[-1].params.exact  # the graph (quantized, rescored)
    _top(store, indexed[0])  # no filter: nothing to count
    assert not recording.requests[-1].params.exact
