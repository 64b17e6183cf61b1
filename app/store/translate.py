"""`qdrant_client.http.models` -> Qdrant Edge objects. Only the shapes this service sends are
mapped; anything else raises, so a new query shape cannot be silently dropped."""

from typing import Any, overload

import qdrant_edge as qe
from qdrant_client.http import models

from app.store.errors import StoreError


class UntranslatableError(StoreError, TypeError):
    """A request shape this translator does not map: refused, never approximated."""


@overload
def filter_(flt: models.Filter) -> qe.Filter: ...


@overload
def filter_(flt: None) -> None: ...


def filter_(flt: models.Filter | None) -> qe.Filter | None:
    if flt is None:
        return None
    return qe.Filter(
        must=_conditions(flt.must),
        should=_conditions(flt.should),
        must_not=_conditions(flt.must_not),
    )


def _conditions(value: Any) -> list[Any] | None:
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    return [condition(item) for item in items]


_UNMAPPED_FIELD_PARTS = (
    "geo_bounding_box",
    "geo_radius",
    "geo_polygon",
    "values_count",
    "is_empty",
    "is_null",
)


def condition(cond: Any) -> Any:
    # Nested filters, ids and emptiness: the revision guard and the leases of app/ingest.
    if isinstance(cond, models.Filter):
        return filter_(cond)
    if isinstance(cond, models.HasIdCondition):
        return qe.HasIdCondition(point_ids={str(i) for i in cond.has_id})
    if isinstance(cond, models.IsEmptyCondition):
        return qe.IsEmptyCondition(key=cond.is_empty.key)
    if isinstance(cond, models.FieldCondition):
        unmapped = [name for name in _UNMAPPED_FIELD_PARTS if getattr(cond, name) is not None]
        if unmapped:
            raise UntranslatableError(f"FieldCondition.{unmapped[0]} has no Edge translation")
        return qe.FieldCondition(key=cond.key, match=_match(cond.match), range=_range(cond.range))
    raise UntranslatableError(f"condition {type(cond).__name__} has no Edge translation")


def _match(match: Any) -> Any:
    if match is None:
        return None
    if isinstance(match, models.MatchValue):
        return qe.MatchValue(match.value)
    if isinstance(match, models.MatchAny):
        return qe.MatchAny(list(match.any))  # type: ignore[arg-type]
    raise UntranslatableError(f"match {type(match).__name__} has no Edge translation")


def _range(rng: Any) -> qe.RangeFloat | None:
    if rng is None:
        return None
    if isinstance(rng, models.Range):
        return qe.RangeFloat(gte=rng.gte, gt=rng.gt, lte=rng.lte, lt=rng.lt)
    raise UntranslatableError(f"range {type(rng).__name__} has no Edge translation")


def vector(value: Any) -> Any:
    if isinstance(value, models.SparseVector):
        return qe.SparseVector(indices=list(value.indices), values=list(value.values))
    if isinstance(value, list):
        return [float(x) for x in value]
    raise UntranslatableError(f"vector {type(value).__name__} has no Edge translation")


def query(q: models.Query | None, using: str | None) -> Any:
    if q is None:
        return None
    if isinstance(q, models.NearestQuery):
        return qe.Query.Nearest(vector(q.nearest), using=using)
    if isinstance(q, models.RrfQuery):
        return qe.Fusion.Rrf(k=q.rrf.k if q.rrf.k is not None else 2, weights=q.rrf.weights)
    if isinstance(q, models.FusionQuery):
        if q.fusion == models.Fusion.DBSF:
            return qe.Fusion.Dbsf()
        raise UntranslatableError("plain RRF fusion: send RrfQuery with an explicit k")
    if isinstance(q, models.OrderByQuery) and isinstance(q.order_by, models.OrderBy):
        order = q.order_by
        direction = (
            qe.Direction.Desc if order.direction == models.Direction.DESC else qe.Direction.Asc
        )
        return qe.OrderBy(order.key, direction=direction)
    raise UntranslatableError(f"query {type(q).__name__} has no Edge translation")


def search_params(params: models.SearchParams | None) -> qe.SearchParams | None:
    if params is None:
        return None
    if params.indexed_only or params.acorn is not None:
        raise UntranslatableError("search params: exact, hnsw_ef and quantization only")
    return qe.SearchParams(
        hnsw_ef=params.hnsw_ef,
        exact=bool(params.exact),
        quantization=_quantization(params.quantization),
    )


def _quantization(
    params: models.QuantizationSearchParams | None,
) -> qe.QuantizationSearchParams | None:
    if params is None:
        return None
    return qe.QuantizationSearchParams(
        ignore=bool(params.ignore), rescore=params.rescore, oversampling=params.oversampling
    )


def prefetch(p: models.Prefetch) -> qe.Prefetch:
    if p.prefetch or p.limit is None:
        raise UntranslatableError("prefetches are one level deep and carry a limit")
    return qe.Prefetch(
        limit=p.limit,
        query=query(p.query, p.using),  # type: ignore[arg-type]
        params=search_params(p.params),
        filter=filter_(p.filter),
        score_threshold=p.score_threshold,
    )


def point(p: models.PointStruct) -> qe.Point:
    vectors: dict[str, Any] = {}
    if isinstance(p.vector, dict):
        vectors = {name: vector(v) for name, v in p.vector.items()}
    elif p.vector is not None:
        raise UntranslatableError("points carry named vectors only")
    return qe.Point(id=str(p.id), vector=vectors, payload=p.payload)


def point_vectors(p: models.PointVectors) -> qe.PointVectors:
    if not isinstance(p.vector, dict):
        raise UntranslatableError("points carry named vectors only")
    return qe.PointVectors(id=str(p.id), vector={name: vector(v) for name, v in p.vector.items()})
