"""`POST /api/v1/search` (scope `search`), and the Astrolabe app's alias of it."""

from typing import Any

from fastapi import APIRouter, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from app.errors import ErrorBody
from app.routes import compat
from app.routes.deps import SearchPrincipal, ServicesDep
from app.search.models.requests import SearchBody, VectorVizBody
from app.search.models.viz import SearchPcaResponse, VectorVizResponse

router = APIRouter(tags=["search"])
# Searches run in anyio's worker threads (40), not asyncio's default executor (CPUs + 4): a
# search waiting up to the verify deadline must not make the other searches queue behind it.
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 413, 503)
}
COMPAT_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    422: {
        "description": 'Astrolabe app dialect only: `{"error": "unsupported_search_type",'
        ' "requested", "supported_search_types"}` or `{"error": "rerank_not_configured"}`'
    },
}


@router.post(
    "/api/v1/search",
    response_model=SearchPcaResponse,
    response_model_exclude_unset=True,
    responses=COMPAT_ERRORS,
)
async def search(body: SearchBody, principal: SearchPrincipal, services: ServicesDep) -> Response:
    """Hybrid (dense + BM25, fused), semantic or BM25 search, or browse (empty query: newest
    matching documents first), under the rich filters and the user's access rights."""
    return as_json(await run_in_threadpool(services.search.search, principal, body))


@router.post(
    compat.VECTOR_VIZ_PATH,
    response_model=VectorVizResponse,
    response_model_exclude_unset=True,
    responses=COMPAT_ERRORS,
)
async def vector_viz_search(
    body: VectorVizBody, principal: SearchPrincipal, services: ServicesDep
) -> Response:
    """The Astrolabe app's search page and 3D plot: the same search, in the app's shape."""
    return as_json(await run_in_threadpool(services.search.vector_viz, principal, body))


def as_json(answer: BaseModel) -> Response:
    """The answer written as JSON once, by pydantic's own encoder. Returned as a model, FastAPI
    would dump it, validate the dump against `response_model` again and encode that (the
    declared `response_model` still documents it)."""
    return Response(answer.model_dump_json(exclude_unset=True), media_type="application/json")
