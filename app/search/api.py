"""The search capability as the HTTP layer calls it: one request model in, one response model
out. Every endpoint runs the one SearchService; this adds only what an endpoint shows beside the
results (the PCA map, the Astrolabe app's fields)."""

from typing import Any

from app.auth import Principal
from app.search import compat
from app.search.links import LinkTemplates
from app.search.models.requests import SearchBody, VectorVizBody, VizParams
from app.search.models.results import SearchResponse
from app.search.models.viz import SearchPcaResponse, VectorVizResponse, VizResponse
from app.search.projection import project_hits
from app.search.service import SearchService
from app.store.base import Store


class SearchApi:
    def __init__(
        self, service: SearchService, store: Store, links: LinkTemplates | None = None
    ) -> None:
        self.service = service
        self.store = store
        self.links = links or LinkTemplates()

    def search(self, principal: Principal, body: SearchBody) -> SearchPcaResponse:
        """`POST /api/v1/search`."""
        return SearchPcaResponse(**self._fields(principal, body))

    def vector_viz(self, principal: Principal, body: VectorVizBody) -> VectorVizResponse:
        """`POST /api/v1/vector-viz/search`: the same search in the Astrolabe app's shape."""
        shaped = self._fields(principal, body)
        shaped.setdefault("reranked", False)
        return VectorVizResponse(**shaped, success=True, total_documents=shaped["total_found"])

    def viz(self, principal: Principal, params: VizParams) -> VizResponse:
        """`GET /viz/search`: the search plus the 2D/3D map of its results."""
        query = params.to_query()
        outcome = self.service.search(principal, query)
        projection = project_hits(self.store, outcome.hits, outcome.query_vector)
        return VizResponse(
            **SearchResponse.fields_of(query, outcome, links=self.links),
            **VizResponse.pca_fields(projection),
        )

    def _fields(self, principal: Principal, body: SearchBody) -> dict[str, Any]:
        if body.rerank and self.service.reranker is None:
            raise compat.rerank_not_configured()
        query = body.to_query()
        outcome = self.service.search(principal, query)
        shaped = SearchResponse.fields_of(
            query, outcome, with_excerpts=body.include_chunks, links=self.links
        )
        if body.include_pca:
            projection = project_hits(self.store, outcome.hits, outcome.query_vector)
            shaped |= SearchPcaResponse.pca_fields(projection)
        return shaped
