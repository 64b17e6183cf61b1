"""The Astrolabe app's dialect at the HTTP edge: a request that speaks it (the app's alias path,
or one of the fields only the app sends) gets the app's 422 for an unknown algorithm
(`app.search.compat`); anything else keeps the 400 envelope."""

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from app.search.compat import unsupported_search_type

VECTOR_VIZ_PATH = "/api/v1/vector-viz/search"
# Fields only the PHP client sends: a request carrying one speaks the app's dialect.
CLIENT_MARKERS = ("include_pca", "include_chunks", "rerank", "min_relevance")


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
