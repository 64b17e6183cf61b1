"""The /viz page and its search: the same search as query parameters, plus a PCA map."""

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse

from app.routes.deps import SearchPrincipal, ServicesDep, SingleValued
from app.routes.search import ERRORS
from app.search.models.requests import VizParams
from app.search.models.viz import VizResponse

router = APIRouter(tags=["viz"])
PAGE = Path(__file__).resolve().parent.parent / "static" / "viz.html"


@router.get("/viz", response_class=HTMLResponse, include_in_schema=True)
def viz_page() -> HTMLResponse:
    """The search page with its filter chips and the 2D/3D map (asks for a token)."""
    return HTMLResponse(PAGE.read_text(encoding="utf-8"))


@router.get(
    "/viz/search", response_model=VizResponse, response_model_exclude_unset=True, responses=ERRORS
)
async def viz_search(
    params: Annotated[VizParams, Query()],
    principal: SearchPrincipal,
    services: ServicesDep,
    _: SingleValued,
) -> VizResponse:
    """The search of `POST /api/v1/search` with its filters as query parameters (lists
    comma- or newline-separated), plus `coordinates_2d`/`_3d` for the map."""
    return await run_in_threadpool(services.search.viz, principal, params)
