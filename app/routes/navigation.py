"""`GET /api/v1/folders` (the folder tree) and `GET /api/v1/chunk-context` (the text around a
result's chunk), scope `search`: both only ever show what the user may read."""

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Query

from app.errors import ErrorBody
from app.routes.deps import SearchPrincipal, ServicesDep, SingleValued
from app.search.models.navigation import (
    ChunkContextParams,
    ChunkContextResponse,
    FolderParams,
    FoldersResponse,
)

router = APIRouter(tags=["navigation"])
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 503)
}


@router.get("/api/v1/folders", response_model=FoldersResponse, responses=ERRORS)
async def folders(
    params: Annotated[FolderParams, Query()],
    principal: SearchPrincipal,
    services: ServicesDep,
    _: SingleValued,
) -> FoldersResponse:
    """The subfolders of `parent` holding documents you may read that match the filters, with
    how many such documents each holds. A folder of only unreadable documents never shows."""
    return await asyncio.to_thread(services.navigation.folders, principal, params)


@router.get("/api/v1/chunk-context", response_model=ChunkContextResponse, responses=ERRORS)
async def chunk_context(
    params: Annotated[ChunkContextParams, Query()],
    principal: SearchPrincipal,
    services: ServicesDep,
    _: SingleValued,
) -> ChunkContextResponse:
    """The text before and after a result's chunk (`start`/`end`: its chunk_start_offset and
    chunk_end_offset). 404 for a document you may not read, as for one that does not exist."""
    return await asyncio.to_thread(services.navigation.chunk_context, principal, params)
