"""`POST /api/v1/search` (scope `search`), and the Astrolabe app's alias of it."""

import asyncio
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import Field

from app import compat
from app.auth import Principal
from app.deps import EngineDep, SearcherDep
from app.errors import ErrorBody
from app.schemas import SearchBody, SearchResponse
from app.search.projection import Projection, project
from app.search.service import SearchOutcome
from app.state import Engine

router = APIRouter(tags=["search"])
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


class VectorVizBody(SearchBody):
    limit: int = Field(default=20, ge=1, le=50, strict=True)


class SearchPcaResponse(SearchResponse):
    coordinates_3d: list[list[float]] | None = Field(
        default=None, description="With include_pca: one [x, y, z] per result, same order."
    )
    query_coords: list[float] | None = Field(default=None, description="With include_pca.")
    pca_variance: dict[str, float] | None = Field(
        default=None, description="With include_pca: explained variance of pc1, pc2, pc3."
    )


class VectorVizResponse(SearchPcaResponse):
    success: bool
    total_documents: int = Field(description="total_found again (what the app reads).")
    reranked: bool


async def projection_of(engine: Engine, outcome: SearchOutcome) -> Projection:
    """PCA of the results' dense vectors, with the query in the same space."""
    vectors = await asyncio.to_thread(engine.store.dense_vectors, [h.id for h in outcome.hits])
    rows = [vectors[h.id] for h in outcome.hits if h.id in vectors]
    return project(rows, outcome.query_vector)


async def run_search(body: SearchBody, principal: Principal, engine: Engine) -> dict[str, Any]:
    """The one search behind both endpoints, shaped as SearchResponse (+ PCA when asked)."""
    if body.rerank:
        raise compat.rerank_not_configured()
    query = body.to_query()
    outcome = await asyncio.to_thread(engine.search.search, principal, query)
    outcome.hits = compat.drop_less_relevant(outcome.hits, body.algorithm, body.min_relevance)
    response = SearchResponse.of(query, outcome, with_excerpts=body.include_chunks)
    result: dict[str, Any] = response.model_dump(
        mode="json", exclude={"facets"} if response.facets is None else set()
    )
    if body.include_pca:
        result |= compat.pca_fields(await projection_of(engine, outcome))
    return result


@router.post("/api/v1/search", response_model=SearchPcaResponse, responses=COMPAT_ERRORS)
async def search(body: SearchBody, principal: SearcherDep, engine: EngineDep) -> JSONResponse:
    """Hybrid (dense + BM25, fused), semantic or BM25 search, or browse (empty query: newest
    matching documents first), under the rich filters and the user's access rights."""
    return JSONResponse(await run_search(body, principal, engine))


@router.post(compat.VECTOR_VIZ_PATH, response_model=VectorVizResponse, responses=COMPAT_ERRORS)
async def vector_viz_search(
    body: VectorVizBody, principal: SearcherDep, engine: EngineDep
) -> JSONResponse:
    """The Astrolabe app's search page and 3D plot: the same search, in the app's shape."""
    result = await run_search(body, principal, engine)
    result |= {"success": True, "total_documents": result["total_found"], "reranked": False}
    return JSONResponse(result)
