"""The search requests on the wire: the body of `POST /api/v1/search` (and of the Astrolabe
app's alias of it) and the query parameters of `GET /viz/search`, both parsed into one
SearchQuery. The contract is docs/api.md; the Astrolabe dialect is docs/astrolabe.md."""

from typing import Annotated

from pydantic import ConfigDict, Field, StrictBool, StrictInt, StrictStr

from app.filters.models import FilterFields, FilterParams
from app.filters.spec import FilterSpec
from app.search.algorithms import Algorithm, FusionMethod
from app.search.fusion_defaults import default_weights_text
from app.search.service import (
    Granularity,
    SearchQuery,
    SortOrder,
)
from app.written import normalize

MAX_QUERY_CHARS = 10_000
MAX_OFFSET = 10_000

STRONG_ONLY = "Keep only the strong matches (see strong_found), before paging and counting."
Sort = Annotated[
    SortOrder | None,
    Field(
        description="relevance (the default with a query) | newest | oldest (by modified_at;"
        " the default when browsing, where relevance means newest). A date sort orders the whole"
        " result set under the filters and relevance floors before paging; equal dates by"
        " relevance, then by document id."
    ),
]


class SearchBody(FilterFields):
    """`POST /api/v1/search`: the query, the page, the algorithm and the filters."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "query": "quarterly report",
                    "limit": 10,
                    "algorithm": "hybrid",
                    "doc_types": ["file"],
                    "modified_after": "2026-01-01T00:00:00Z",
                    "path_prefixes": ["/Projects"],
                    "include_facets": True,
                }
            ]
        },
    )

    query: StrictStr = Field(
        default="", max_length=MAX_QUERY_CHARS, description="Empty = browse: newest first."
    )
    limit: StrictInt = Field(default=10, ge=1, le=100)
    offset: StrictInt = Field(default=0, ge=0, le=MAX_OFFSET)
    algorithm: Algorithm = Field(
        default=Algorithm.HYBRID,
        description="hybrid: dense + BM25 fused; semantic: dense only; bm25: sparse only.",
    )
    fusion: FusionMethod = Field(
        default=FusionMethod.RRF,
        description="hybrid only: rrf (reciprocal rank fusion), dbsf (distribution-based score"
        " fusion) or convex (a weighted sum of each branch's scores over its best).",
    )
    dense_weight: float | None = Field(
        default=None,
        ge=0,
        le=1,
        allow_inf_nan=False,
        strict=True,
        description="hybrid only: the dense branch's weight against the sparse one's (1 -"
        f" dense_weight). Default: {default_weights_text()}, as the quality bench chose them"
        " (docs/benchmarks.md).",
    )
    feedback: StrictBool = Field(
        default=False,
        description="Pseudo-relevance feedback: expand the query from its first 3 results (under"
        " the same filter and access rule) and search again: Rocchio on the dense vector, RM3 on"
        " the BM25 terms. One more engine round per branch.",
    )
    granularity: Granularity = Field(
        default=Granularity.CHUNK, description="document: the best chunk per document."
    )
    score_threshold: float = Field(
        default=0.0,
        ge=0,
        allow_inf_nan=False,
        strict=True,
        description="Minimum score, on the algorithm's own scale.",
    )
    include_facets: StrictBool = Field(default=False, description="Counts for the filter chips.")
    sort: Sort = None
    # The Astrolabe app's fields (docs/astrolabe.md): declared, so they are known, not ignored.
    include_chunks: StrictBool = Field(default=True, description="false: excerpts are empty.")
    include_pca: StrictBool = Field(
        default=False, description="Add coordinates_3d, query_coords and pca_variance."
    )
    rerank: StrictBool = Field(
        default=False,
        description="Reorder the first candidates (SEARCH_RERANK_TOP_N, 30) with the reranker"
        " (SEARCH_RERANK_URL); without one, true answers 422 rerank_not_configured.",
    )
    min_relevance: float | None = Field(
        default=None,
        ge=0,
        le=1,
        allow_inf_nan=False,
        strict=True,
        description="Minimum `relevance` of a result, applied before paging and counting.",
    )
    strong_only: StrictBool = Field(
        default=False,
        description=STRONG_ONLY,
    )

    def to_query(self) -> SearchQuery:
        return search_query(
            self,
            self.to_spec(),
            min_relevance=self.min_relevance,
            rerank=self.rerank,
            dense_weight=self.dense_weight,
            feedback=self.feedback,
        )


class VectorVizBody(SearchBody):
    """`POST /api/v1/vector-viz/search`: the app's search page; smaller pages."""

    limit: StrictInt = Field(default=20, ge=1, le=50)


class VizParams(FilterParams):
    """`GET /viz/search`: the body of `POST /api/v1/search` as query parameters; lists are
    comma-separated (doc_types, categories) or newline-separated (folders, tags, owners)."""

    query: str = Field(default="", max_length=MAX_QUERY_CHARS)
    limit: int = Field(default=20, ge=1, le=50)
    offset: int = Field(default=0, ge=0, le=MAX_OFFSET)
    algorithm: Algorithm = Algorithm.HYBRID
    fusion: FusionMethod = FusionMethod.RRF
    granularity: Granularity = Granularity.CHUNK
    score_threshold: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    include_facets: bool = False
    sort: Sort = None
    strong_only: bool = Field(
        default=False,
        description=STRONG_ONLY,
    )

    def to_query(self) -> SearchQuery:
        return search_query(self, self.filters().to_spec())


def search_query(
    asked: SearchBody | VizParams,
    spec: FilterSpec,
    *,
    min_relevance: float | None = None,
    rerank: bool = False,
    dense_weight: float | None = None,
    feedback: bool = False,
) -> SearchQuery:
    """The search a request asks for, from the fields the body and the query parameters share."""
    return SearchQuery(
        text=normalize(asked.query),
        algorithm=asked.algorithm,
        fusion=asked.fusion,
        dense_weight=dense_weight,
        feedback=feedback,
        rerank=rerank,
        granularity=asked.granularity,
        limit=asked.limit,
        offset=asked.offset,
        score_threshold=asked.score_threshold,
        spec=spec,
        include_facets=asked.include_facets,
        min_relevance=min_relevance,
        sort=asked.sort,
        strong_only=asked.strong_only,
    )
