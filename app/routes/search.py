"""`POST /api/v1/search` (scope `search`)."""

import asyncio
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.deps import EngineDep, SearcherDep
from app.errors import ErrorBody
from app.schemas import SearchBody, SearchResponse

router = APIRouter(tags=["search"])
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 413, 503)
}


def search_json(response: SearchResponse) -> JSONResponse:
    """The response body; `facets` appears only when asked for."""
    exclude = {"facets"} if response.facets is None else set()
    return JSONResponse(response.model_dump(mode="json", exclude=exclude))


@router.post("/api/v1/search", response_model=SearchResponse, responses=ERRORS)
async def search(body: SearchBody, principal: SearcherDep, engine: EngineDep) -> JSONResponse:
    """Hybrid (dense + BM25, fused), semantic or BM25 search, or browse (empty query: newest
    matching documents first), under the rich filters and the user's access rights."""
    query = body.to_query()
    outcome = await asyncio.to_thread(engine.search.search, principal, query)
    return search_json(SearchResponse.of(query, outcome))
