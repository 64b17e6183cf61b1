"""The /viz page and its search: the same filters as query parameters, plus a PCA map."""

import asyncio
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import Field

from app.deps import EngineDep, SearcherDep
from app.routes.search import ERRORS, projection_of
from app.schemas import FilterFields, SearchResponse
from app.search.algorithms import Algorithm, FusionMethod
from app.search.service import Granularity, SearchQuery

router = APIRouter(tags=["viz"])
PAGE = Path(__file__).resolve().parent.parent / "static" / "viz.html"


class VizResponse(SearchResponse):
    coordinates_2d: list[list[float]] = Field(description="One [x, y] per result, same order.")
    coordinates_3d: list[list[float]] = Field(description="One [x, y, z] per result.")
    query_coords_2d: list[float] | None
    query_coords_3d: list[float] | None
    pca_variance: list[float] = Field(description="Explained variance ratio per component.")


def _split(value: str | None, separator: str) -> list[str] | None:
    return None if value is None else value.split(separator)


@router.get("/viz", response_class=HTMLResponse, include_in_schema=True)
def viz_page() -> HTMLResponse:
    """The search page with its filter chips and the 2D/3D map (asks for a token)."""
    return HTMLResponse(PAGE.read_text(encoding="utf-8"))


@router.get("/viz/search", response_model=VizResponse, responses=ERRORS)
async def viz_search(
    principal: SearcherDep,
    engine: EngineDep,
    query: Annotated[str, Query(max_length=10_000)] = "",
    limit: Annotated[int, Query(ge=1, le=50)] = 20,
    algorithm: Algorithm = Algorithm.HYBRID,
    fusion: FusionMethod = FusionMethod.RRF,
    granularity: Granularity = Granularity.CHUNK,
    doc_types: Annotated[str | None, Query(description="Comma-separated.")] = None,
    modified_after: str | None = None,
    modified_before: str | None = None,
    path_prefix: str | None = None,
    path_prefixes: Annotated[str | None, Query(description="Newline-separated.")] = None,
    tags: Annotated[str | None, Query(description="Newline-separated.")] = None,
) -> JSONResponse:
    filters = FilterFields.parse(
        {
            "doc_types": _split(doc_types, ","),
            "modified_after": modified_after,
            "modified_before": modified_before,
            "path_prefix": path_prefix,
            "path_prefixes": _split(path_prefixes, "\n"),
            "tags": _split(tags, "\n"),
        }
    )
    search = SearchQuery(
        text=query,
        algorithm=algorithm,
        fusion=fusion,
        granularity=granularity,
        limit=limit,
        spec=filters.to_spec(),
    )
    outcome = await asyncio.to_thread(engine.search.search, principal, search)
    projection = await projection_of(engine, outcome)
    body: dict[str, Any] = SearchResponse.of(search, outcome).model_dump(
        mode="json", exclude={"facets"}
    )
    body |= {
        "coordinates_2d": projection.coordinates_2d,
        "coordinates_3d": projection.coordinates_3d,
        "query_coords_2d": projection.query_2d,
        "query_coords_3d": projection.query_3d,
        "pca_variance": projection.variance,
    }
    return JSONResponse(body)
