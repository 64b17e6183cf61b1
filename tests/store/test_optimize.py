"""`astrolabe-search optimize`: the offline merge + HNSW build leaves every answer as it was."""

from pathlib import Path

import numpy as np
import pytest
from qdrant_client.http import models

from app.cli import main
from app.store.base import Query
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR, DOC_KEY, KIND, KIND_CHUNK


def _points(start: int, count: int, rng: np.random.Generator) -> list[models.PointStruct]:
    vectors = rng.standard_normal((count, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        models.PointStruct(
            id=f"00000000-0000-0000-0000-{start + n:012d}",
            vector={DENSE_VECTOR: vector.tolist()},
            payload={KIND: KIND_CHUNK, DOC_KEY: f"doc{start + n}", "chunk_index": (start + n) % 3},
        )
        for n, vector in enumerate(vectors)
    ]


def _nearest(store: EdgeStore, query: list[float]) -> list[str]:
    only_first = models.Filter(
        must=[models.FieldCondition(key="chunk_index", match=models.MatchValue(value=0))]
    )
    hits = store.query(
        Query(
            query=models.NearestQuery(nearest=query),
            using=DENSE_VECTOR,
            filter=only_first,
            limit=10,
        )
    )
    return [hit.id for hit in hits]


def test_optimize_keeps_results_and_the_command_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(7)
    store = EdgeStore(tmp_path, "c")
    for start in range(0, 600, 100):  # several writes, deletes between: segments to merge
        store.upsert(_points(start, 100, rng))
        first = models.FieldCondition(key=DOC_KEY, match=models.MatchValue(value=f"doc{start}"))
        store.delete(models.Filter(must=[first]))
    queries = [[float(x) for x in rng.standard_normal(384)] for _ in range(5)]
    before = [_nearest(store, q) for q in queries]
    store.close()

    monkeypatch.setenv("SEARCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SEARCH_COLLECTION", "c")
    with pytest.raises(SystemExit) as done:
        main(["optimize"])
    assert done.value.code == 0
    printed = capsys.readouterr().out
    assert "optimized in" in printed
    assert "BM25: re-encoded 594 chunks" in printed  # an index from before the fit gets one

    store = EdgeStore(tmp_path, "c")
    assert store.segments()["points"] == 595  # and the statistic's own point
    assert [_nearest(store, q) for q in queries] == before
    store.close()
