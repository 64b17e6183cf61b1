"""The map of a search's results on the wire: the Astrolabe app's PCA fields (`include_pca`,
`POST /api/v1/vector-viz/search`) and the 2D/3D map of `GET /viz/search`."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.search.models.results import SearchResponse
from app.search.projection import Projection


class PcaVariance(BaseModel):
    pc1: float
    pc2: float
    pc3: float


EXAMPLE_RESPONSE: dict[str, Any] = {
    "query": "quarterly report",
    "algorithm": "hybrid",
    "algorithm_used": "hybrid",
    "fusion": "rrf",
    "granularity": "chunk",
    "sort": "relevance",
    "results": [
        {
            "doc_type": "file",
            "doc_id": "4711",
            "id": "4711",
            "title": "Q3 report",
            "excerpt": "... the matching chunk text ...",
            "score": 0.0325,
            "relevance": 0.975,
            "relevance_source": "fusion_normalised",
            "chunk_index": 0,
            "total_chunks": 3,
            "owner": "alice",
            "modified_at": "2026-05-04T10:00:00Z",
            "file_path": "/Projects/Reports/q3.md",
            "tags": ["urgent", "finance"],
            "category": None,
            "mime_type": "text/markdown",
            "path": "/Projects/Reports/q3.md",
            "page_number": None,
            "page_start": None,
            "page_end": None,
            "page_count": None,
            "url": "https://cloud.example/f/4711",
            "strong": True,
        }
    ],
    "total_found": 1,
    "strong_found": 1,
    "verified_chunk_count": 1,
    "dropped_document_count": 0,
    "filters": {
        "doc_types": ["file"],
        "modified_after": "2026-01-01T00:00:00Z",
        "modified_before": None,
        "path_prefixes": ["/Projects"],
        "tags": [],
        "tags_all": [],
        "categories": [],
        "owners": [],
    },
    "facets": {"doc_type": {"file": 12}, "tags": {"urgent": 3}, "folders": {"/Projects": 12}},
    "timing_ms": {"embed": 4.1, "search": 1.2, "verify": 0.0, "total": 6.0},
}


class SearchPcaResponse(SearchResponse):
    """The search response; with the app's `include_pca`, its 3D map too."""

    model_config = ConfigDict(json_schema_extra={"examples": [EXAMPLE_RESPONSE]})

    coordinates_3d: list[list[float]] | None = Field(
        default=None, description="With include_pca: one [x, y, z] per result, same order."
    )
    query_coords: list[float] | None = Field(default=None, description="With include_pca.")
    pca_variance: PcaVariance | None = Field(
        default=None, description="With include_pca: explained variance of pc1, pc2, pc3."
    )

    @staticmethod
    def pca_fields(projection: Projection) -> dict[str, Any]:
        """The app's PCA shape; it expects empty lists for fewer than 2 results."""
        if len(projection.coordinates_3d) < 2:
            return {
                "coordinates_3d": [],
                "query_coords": [],
                "pca_variance": PcaVariance(pc1=0.0, pc2=0.0, pc3=0.0),
            }
        variance = projection.variance + [0.0] * (3 - len(projection.variance))
        return {
            "coordinates_3d": projection.coordinates_3d,
            "query_coords": projection.query_3d or [],
            "pca_variance": PcaVariance(pc1=variance[0], pc2=variance[1], pc3=variance[2]),
        }


class VectorVizResponse(SearchPcaResponse):
    """`POST /api/v1/vector-viz/search`: the search in the Astrolabe app's shape."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [EXAMPLE_RESPONSE | {"success": True, "total_documents": 1}]}
    )

    success: bool
    total_documents: int = Field(description="total_found again (what the app reads).")


class VizResponse(SearchResponse):
    """`GET /viz/search`: the search response plus the PCA map of its results."""

    coordinates_2d: list[list[float]] = Field(description="One [x, y] per result, same order.")
    coordinates_3d: list[list[float]] = Field(description="One [x, y, z] per result.")
    query_coords_2d: list[float] | None
    query_coords_3d: list[float] | None
    pca_variance: list[float] = Field(description="Explained variance ratio per component.")

    @staticmethod
    def pca_fields(projection: Projection) -> dict[str, Any]:
        return {
            "coordinates_2d": projection.coordinates_2d,
            "coordinates_3d": projection.coordinates_3d,
            "query_coords_2d": projection.query_2d,
            "query_coords_3d": projection.query_3d,
            "pca_variance": projection.variance,
        }
