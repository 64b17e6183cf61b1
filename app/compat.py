"""What the Astrolabe app's PHP client (`McpServerClient`) expects beyond docs/api.md: its 422
bodies (docs/astrolabe.md). The search itself is the one search service."""

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from app.errors import ServiceError
from app.search.algorithms import Algorithm

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
