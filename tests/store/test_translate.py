"""The qdrant_client.models -> Qdrant Edge translator, checked by what the real shard returns."""

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import qdrant_edge as qe
from qdrant_client.http import models

from app.store import translate
from app.store.edge import EdgeStore

POINTS = [
    {"n": 0, "tag": ["a", "b"], "t": 10},
    {"n": 1, "tag": ["b"], "t": 20},
    {"n": 2, "tag": ["c"], "t": 30},
    {"n": 3, "tag": [], "t": 40},
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EdgeStore]:
    edge = EdgeStore(tmp_path, "t")
    edge.upsert(
        [
            models.PointStruct(
                id=str(uuid.uuid5(uuid.NAMESPACE_URL, str(p["n"]))),
                vector={"dense": [1.0] + [0.0] * 383},
                payload=p,
            )
            for p in POINTS
        ]
    )
    yield edge
    edge.close()


def matching(store: EdgeStore, flt: models.Filter) -> list[int]:
    return sorted(int(h.payload["n"]) for h in store.scroll(flt, limit=100))


def field(key: str, **kwargs: object) -> models.FieldCondition:
    return models.FieldCondition(key=key, **kwargs)  # type: ignore[arg-type]


def test_match_any_value_and_range(store: EdgeStore) -> None:
    any_b = field("tag", match=models.MatchAny(any=["b", "c"]))
    assert matching(store, models.Filter(must=[any_b])) == [0, 1, 2]
    only_a = field("tag", match=models.MatchValue(value="a"))
    assert matching(store, models.Filter(must=[only_a])) == [0]
    window = field("t", range=models.Range(gte=20, lte=30))
    assert matching(store, models.Filter(must=[window])) == [1, 2]
    open_end = field("t", range=models.Range(gt=20))
    assert matching(store, models.Filter(must=[open_end])) == [2, 3]


def test_should_and_must_not(store: EdgeStore) -> None:
    b = field("tag", match=models.MatchValue(value="b"))
    late = field("t", range=models.Range(gte=30))
    assert matching(store, models.Filter(should=[b, late])) == [0, 1, 2, 3]
    assert matching(store, models.Filter(must_not=[b])) == [2, 3]
    assert matching(store, models.Filter(must=[late], must_not=[b])) == [2, 3]


def test_nested_filters_ids_and_emptiness(store: EdgeStore) -> None:
    b = field("tag", match=models.MatchValue(value="b"))
    late = field("t", range=models.Range(gte=30))
    assert matching(store, models.Filter(must=[late, models.Filter(should=[b, late])])) == [2, 3]
    ids: list[models.ExtendedPointId] = [str(uuid.uuid5(uuid.NAMESPACE_URL, n)) for n in "02"]
    assert matching(store, models.Filter(must=[models.HasIdCondition(has_id=ids)])) == [0, 2]
    no_tag = models.IsEmptyCondition(is_empty=models.PayloadField(key="tag"))
    assert matching(store, models.Filter(must=[no_tag])) == [3]
    missing = models.IsEmptyCondition(is_empty=models.PayloadField(key="absent"))
    assert matching(store, models.Filter(must=[missing])) == [0, 1, 2, 3]


def test_shapes_the_service_never_sends_are_refused() -> None:
    for unsent in (
        models.Filter(must=[field("t", match=models.MatchExcept(**{"except": [10]}))]),
        models.Filter(must=[field("t", values_count=models.ValuesCount(gt=1))]),
    ):
        with pytest.raises(translate.UntranslatableError):
            translate.filter_(unsent)
    nested = models.Prefetch(prefetch=[models.Prefetch(limit=1)], limit=1)
    with pytest.raises(translate.UntranslatableError):
        translate.prefetch(nested)


def test_queries_translate_with_explicit_parameters() -> None:
    rrf = translate.query(models.RrfQuery(rrf=models.Rrf(k=60)), None)
    assert isinstance(rrf, qe.Fusion.Rrf) and rrf.k == 60
    assert isinstance(
        translate.query(models.FusionQuery(fusion=models.Fusion.DBSF), None), qe.Fusion.Dbsf
    )
    with pytest.raises(translate.UntranslatableError):  # qdrant's default k=2 must not slip in
        translate.query(models.FusionQuery(fusion=models.Fusion.RRF), None)
    order = models.OrderByQuery(order_by=models.OrderBy(key="t", direction=models.Direction.DESC))
    translated = translate.query(order, None)
    assert isinstance(translated, qe.OrderBy) and translated.direction == qe.Direction.Desc
    with pytest.raises(translate.UntranslatableError):
        translate.condition(field("t", match=models.MatchText(text="x")))


def test_search_parameters_translate_with_their_quantization() -> None:
    rescored = models.SearchParams(
        hnsw_ef=64,
        quantization=models.QuantizationSearchParams(rescore=True, oversampling=2.0),
    )
    translated = translate.search_params(rescored)
    assert translated is not None and translated.hnsw_ef == 64 and not translated.exact
    assert translated.quantization is not None
    assert translated.quantization.rescore is True
    assert translated.quantization.oversampling == 2.0
    exact = translate.search_params(models.SearchParams(exact=True))
    assert exact is not None and exact.exact and exact.quantization is None
    with pytest.raises(translate.UntranslatableError):
        translate.search_params(models.SearchParams(indexed_only=True))
