"""The Astrolabe app's 422 bodies (docs/astrolabe.md): what its PHP client (`McpServerClient`)
reads beyond docs/api.md. The search itself is the one search service."""

from typing import Any

from fastapi.responses import JSONResponse

from app.errors import ServiceError
from app.search.algorithms import Algorithm

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
