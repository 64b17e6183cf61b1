"""What the Astrolabe app's PHP client (`McpServerClient`) expects beyond API.md: its 422 bodies,
its relevance floor and its PCA shape. The search itself is the one search service."""

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from app.errors import ServiceError
from app.search.algorithms import Algorithm
from app.search.projection import EMPTY, Projection
from app.store.base import Hit

VECTOR_VIZ_PATH = "/api/v1/vector-viz/search"
# Fields only the PHP client sends: a request carrying one speaks the app's dialect.
CLIENT_MARKERS = ("include_pca", "include_chunks", "rerank", "min_relevance")
SUPPORTED = [a.value for a in Algorithm]


class CompatError(ServiceError):
    """A 422 in the shape the PHP client reads: `{"error": "<code>", ...}`."""

    status_code = 422

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = code
        self.extra = extra

    def response(self) -> JSONResponse:
        body = {"error": self.code, "message": self.message, **self.extra}
        return JSONResponse(body, status_code=self.status_code)


def unsupported_search_type(requested: Any) -> CompatError:
    return CompatError(
        "unsupported_search_type",
        f"search type {requested!r} is not offered here",
        requested=requested,
        supported_search_types=SUPPORTED,
    )


def rerank_not_configured() -> CompatError:
    return CompatError(
        "rerank_not_configured", "no reranker is configured on this server", rerank_available=False
    )


def speaks_app_dialect(request: Request, body: Any) -> bool:
    if request.url.path == VECTOR_VIZ_PATH:
        return True
    return isinstance(body, dict) and any(key in body for key in CLIENT_MARKERS)


def compat_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse | None:
    """An unknown `algorithm` from the app gets its 422; anything else keeps the 400 envelope."""
    for error in exc.errors():
        if tuple(error.get("loc", ())) == ("body", "algorithm") and speaks_app_dialect(
            request, exc.body
        ):
            return unsupported_search_type(error.get("input")).response()
    return None


def drop_less_relevant(
    hits: list[Hit], algorithm: Algorithm, min_relevance: float | None
) -> list[Hit]:
    """bm25 / hybrid scores have no fixed scale: min_relevance is relative to the best hit.
    (semantic's floor is a cosine threshold applied inside the engine.)"""
    if min_relevance is None or algorithm is Algorithm.SEMANTIC or not hits:
        return hits
    best = max(hit.score for hit in hits)
    return [hit for hit in hits if hit.score >= min_relevance * best]


def pca_fields(projection: Projection) -> dict[str, Any]:
    """The app's PCA shape; it expects empty lists for fewer than 2 results."""
    if len(projection.coordinates_3d) < 2:
        projection = EMPTY
    variance = projection.variance + [0.0] * (3 - len(projection.variance))
    return {
        "coordinates_3d": projection.coordinates_3d,
        "query_coords": projection.query_3d or [],
        "pca_variance": {"pc1": variance[0], "pc2": variance[1], "pc3": variance[2]},
    }
