"""BM25 fitted to the corpus: the statistic lives in the index, new chunks use it, a drift past
the bound re-encodes the stored sparse vectors from their text (never the dense ones), and an
interrupted pass resumes."""

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import qdrant_edge as qe
from qdrant_client.http import models

from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder, token_count
from app.filters import selectors
from app.ingest import sparse_fit
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.ingest.sparse_fit import DRIFT_BOUND, META_ID, read_fit, refit
from app.store.base import Hit, Store
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR, chunk_text
from app.store.server import ServerStore
from tests.helpers import doc
from tests.store.test_congruence import LOCAL_MODE_WARNING

SHORT = "Neutron flux in a reactor core."
LONG = " ".join(
    f"Measurement {i} of the neutron flux, the reactor power and the coolant temperature"
    f" taken during run {i} of the experiment."
    for i in range(8)
)


def _edge(tmp_path: Path) -> EdgeStore:
    return EdgeStore(tmp_path, "c")


def _server(tmp_path: Path) -> ServerStore:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", LOCAL_MODE_WARNING, UserWarning)
        return ServerStore(":memory:", None, "c")


@pytest.fixture(params=["edge", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened: Store = _edge(tmp_path) if request.param == "edge" else _server(tmp_path)
    try:
        yield opened
    finally:
        opened.close()


def _index(store: Store, *documents: dict[str, object]) -> None:
    indexer = Indexer(store, HashingEncoder(), Bm25Encoder(), chunk_words=60)
    indexer.index(indexer.accept(validate_batch(list(documents))))


def _stored(store: Store) -> dict[str, tuple[dict[str, object], models.SparseVector, list[float]]]:
    """Every chunk's payload, sparse and dense vector, by id."""
    found = {}
    hits, _ = store.scroll_page(selectors.chunks(), None, 10_000)
    dense = store.dense_vectors([hit.id for hit in hits])
    for hit in hits:
        sparse = _sparse(store, hit.id)
        found[hit.id] = (hit.payload, sparse, dense[hit.id])
    return found


def _sparse(store: Store, point_id: str) -> models.SparseVector:
    if isinstance(store, EdgeStore):
        record = store._shard.retrieve([point_id], False, [SPARSE_VECTOR])[0]
        assert isinstance(record.vector, dict)
        vector = record.vector[SPARSE_VECTOR]
        assert isinstance(vector, qe.SparseVector)
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))
    assert isinstance(store, ServerStore)
    point = store._client.retrieve("c", [point_id], with_vectors=[SPARSE_VECTOR])[0]
    assert isinstance(point.vector, dict)
    value = point.vector[SPARSE_VECTOR]
    assert isinstance(value, models.SparseVector)
    return value


def _encoded_with(avg_len: float, payload: dict[str, object]) -> models.SparseVector:
    return Bm25Encoder(avg_len).encode_documents([chunk_text(payload)])[0]


def _same(a: models.SparseVector, b: models.SparseVector) -> bool:
    pairs_a = sorted(zip(a.indices, a.values, strict=True))
    pairs_b = sorted(zip(b.indices, b.values, strict=True))
    return [i for i, _ in pairs_a] == [i for i, _ in pairs_b] and all(
        abs(x - y) < 1e-5 for (_, x), (_, y) in zip(pairs_a, pairs_b, strict=True)
    )


def test_the_first_batch_fits_the_mean_and_new_chunks_use_it(store: Store) -> None:
    assert read_fit(store) is None
    _index(store, doc("a", SHORT), doc("b", SHORT + " Shielding."))
    fit = read_fit(store)
    assert fit is not None and fit.chunks == 2 and fit.resume is None
    texts = [f"Document a\n{SHORT}", f"Document b\n{SHORT} Shielding."]
    assert fit.avg_len == pytest.approx(sum(map(token_count, texts)) / 2)
    _index(store, doc("c", LONG))  # later chunks: encoded with the stored mean, not their own
    assert read_fit(store) == fit
    for payload, sparse, _ in _stored(store).values():
        assert _same(sparse, _encoded_with(fit.avg_len, payload))
        assert not _same(sparse, _encoded_with(256.0, payload))


def test_the_statistic_is_never_a_result_a_count_or_a_facet(store: Store) -> None:
    _index(store, doc("a", SHORT))
    assert store.retrieve([META_ID])  # it is there
    assert store.count(selectors.chunks()) == 1
    assert store.count(selectors.documents()) == 1
    assert store.count(selectors.placeholders()) == 0
    hits, _ = store.scroll_page(selectors.chunks(), None, 100)
    assert META_ID not in {hit.id for hit in hits}
    assert store.facet("kind", selectors.chunks(), 10) == {"chunk": 1}


def test_a_drift_past_the_bound_reencodes_sparse_vectors_only(store: Store) -> None:
    _index(store, doc("a", SHORT))
    first = read_fit(store)
    assert first is not None
    _index(store, *(doc(f"l{i}", LONG) for i in range(4)))
    before = _stored(store)
    done = refit(store)
    assert done.before == first and done.drift is not None and done.drift > DRIFT_BOUND
    after_fit = read_fit(store)
    assert after_fit is not None and after_fit.resume is None
    assert after_fit.chunks == len(before)
    assert done.reencoded == len(before)
    after = _stored(store)
    for point_id, (payload, sparse, dense) in after.items():
        assert _same(sparse, _encoded_with(after_fit.avg_len, payload))
        assert dense == pytest.approx(before[point_id][2])  # the dense model never ran
        assert payload == before[point_id][0]
    assert refit(store).reencoded == 0  # within the bound now: nothing to do


def test_within_the_bound_nothing_is_rewritten_unless_forced(store: Store) -> None:
    _index(store, doc("a", SHORT), doc("b", SHORT))
    assert refit(store).reencoded == 0
    assert refit(store, force=True).reencoded == 2


def test_an_interrupted_pass_resumes_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _edge(tmp_path)
    try:
        _index(store, doc("a", SHORT))
        _index(store, *(doc(f"l{i}", LONG) for i in range(30)))
        monkeypatch.setattr(sparse_fit, "PAGE", 8)
        real = store.update_vectors
        calls = 0

        def failing(points: list[models.PointVectors], condition: models.Filter | None) -> None:
            nonlocal calls
            calls += 1
            if calls > 10:
                raise RuntimeError("killed")
            real(points, condition)

        monkeypatch.setattr(store, "update_vectors", failing)
        with pytest.raises(RuntimeError):
            refit(store)
        stopped = read_fit(store)
        assert stopped is not None and stopped.resume not in (None, "")
        monkeypatch.setattr(store, "update_vectors", real)
        resumed = refit(store)
        assert resumed.live_mean is None  # resumed, not measured again
        assert 0 < resumed.reencoded < 181
        fit = read_fit(store)
        assert fit is not None and fit.resume is None and fit.avg_len == stopped.avg_len
        for payload, sparse, _ in _stored(store).values():
            assert _same(sparse, _encoded_with(fit.avg_len, payload))
    finally:
        store.close()


def test_a_chunk_replaced_meanwhile_keeps_its_own_vector(store: Store) -> None:
    _index(store, doc("a", SHORT))
    (point_id, (payload, sparse, _)), *_ = _stored(store).items()
    stale = int(str(payload["revision"])) - 1
    sparse_fit._write_sparse(
        store,
        Bm25Encoder(1000.0),
        [Hit(point_id, 0.0, payload)],
        stale,
    )
    assert _same(_sparse(store, point_id), sparse)
    store.update_vectors(
        [models.PointVectors(id=point_id, vector={DENSE_VECTOR: [0.0] * 383 + [1.0]})]
    )
    gone = "00000000-0000-0000-0000-000000000001"
    store.update_vectors([models.PointVectors(id=gone, vector={DENSE_VECTOR: [1.0] * 384})])
    assert not store.retrieve([gone])  # never created
