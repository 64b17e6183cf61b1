"""The search capability on the wire: `POST /api/v1/search` (and the Astrolabe app's alias of
it) and `GET /viz/search` parse into one SearchQuery; the responses are built from its outcome.
The contract is docs/api.md; the Astrolabe dialect is docs/astrolabe.md."""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from app.filters.models import AppliedFilters, FilterFields, FilterParams
from app.filters.spec import FilterSpec, format_timestamp
from app.search.algorithms import Algorithm, FusionMethod, RelevanceSource
from app.search.context import MAX_CONTEXT
from app.search.links import LinkTemplates
from app.search.projection import Projection
from app.search.service import (
    RELEVANCE_DIGITS,
    Granularity,
    Relevance,
    SearchOutcome,
    SearchQuery,
    SortOrder,
)
from app.store import fields
from app.store.base import Hit

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
        " dense_weight). Default: 0.4 for rrf and dbsf, 0.7 for convex (docs/benchmarks.md).",
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
        text=asked.query,
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


class SearchResult(BaseModel):
    doc_type: str
    doc_id: str
    id: str = Field(description="The document id again (what the Astrolabe app reads).")
    title: str
    excerpt: str = Field(description="The matching chunk's text.")
    score: float = Field(description="The algorithm's own score (its scale depends on it).")
    relevance: float | None = Field(
        ge=0,
        le=1,
        description="How well the result matches, in [0, 1]; a hit every branch ranks first"
        " scores 1 (see relevance_source). null when browsing (no query).",
    )
    relevance_source: RelevanceSource | None = Field(
        description="cosine (semantic: the cosine similarity), bm25_normalised (bm25: the score"
        " over the best score of the search), fusion_normalised (hybrid: the fused score over"
        " the best possible one) or rerank (the reranker's score); null when browsing."
    )
    chunk_index: int
    total_chunks: int
    owner: str
    modified_at: str = Field(description="RFC 3339 UTC ending in Z.")
    file_path: str | None
    tags: list[str]
    category: str | None
    mime_type: str | None
    path: str | None = Field(description="file_path again (what the Astrolabe app reads).")
    chunk_start_offset: int | None = Field(
        description="Where the chunk's text starts in the document's content, in characters"
        " (excerpt == content[start:end]; for GET /api/v1/chunk-context). null for chunks"
        " indexed before offsets were kept."
    )
    chunk_end_offset: int | None = Field(description="Where it ends (exclusive).")
    page_number: int | None = Field(
        description="Paged files: the page (PDF), slide (PPTX, ODP) or sheet (XLSX, ODS) the"
        " chunk starts on, 1-based; null for unpaged documents."
    )
    page_end: int | None = Field(description="The page it ends on (a chunk may span PDF pages).")
    page_count: int | None = Field(description="The document's pages, slides or sheets.")
    url: str | None = Field(
        description="The document's link (http or https): its own `url`, else one built by"
        " SEARCH_LINK_TEMPLATE_<DOC_TYPE>; null without either."
    )
    strong: bool | None = Field(
        description="Whether it is a strong match (see strong_found); null when browsing.",
    )

    @classmethod
    def of(
        cls,
        hit: Hit,
        relevance: Relevance | None = None,
        with_excerpt: bool = True,
        links: LinkTemplates | None = None,
        strong: bool | None = None,
    ) -> "SearchResult":
        p = hit.payload
        return cls(
            strong=strong,
            relevance=None if relevance is None else round(relevance.value, RELEVANCE_DIGITS),
            relevance_source=None if relevance is None else relevance.source,
            doc_type=p[fields.DOC_TYPE],
            doc_id=p[fields.DOC_ID],
            id=p[fields.DOC_ID],
            path=p.get(fields.FILE_PATH),
            title=p.get(fields.TITLE) or "",
            excerpt=(p.get(fields.TEXT) or "") if with_excerpt else "",
            score=round(hit.score, 6),
            chunk_index=int(p[fields.CHUNK_INDEX]),
            total_chunks=int(p[fields.TOTAL_CHUNKS]),
            owner=p[fields.OWNER],
            modified_at=format_timestamp(int(p[fields.MODIFIED_AT])) or "",
            file_path=p.get(fields.FILE_PATH),
            tags=list(p.get(fields.TAGS) or []),
            category=p.get(fields.CATEGORY),
            mime_type=p.get(fields.MIME_TYPE),
            chunk_start_offset=p.get(fields.CHUNK_START),
            chunk_end_offset=p.get(fields.CHUNK_END),
            page_number=p.get(fields.PAGE_NUMBER),
            page_end=p.get(fields.PAGE_END),
            page_count=p.get(fields.PAGE_COUNT),
            url=(links or LinkTemplates()).url(p),
        )


class Timing(BaseModel):
    embed: float
    search: float
    verify: float
    rerank: float | None = Field(
        default=None, description="The reranker's call; only when `rerank` was asked."
    )
    total: float


class SearchResponse(BaseModel):
    query: str
    algorithm: Literal["hybrid", "semantic", "bm25"]
    algorithm_used: Literal["hybrid", "semantic", "bm25"] = Field(
        description="algorithm again (what the Astrolabe app reads)."
    )
    fusion: Literal["rrf", "dbsf", "convex"]
    granularity: Literal["chunk", "document"]
    sort: SortOrder = Field(description="The sort applied (the request's, or its default).")
    results: list[SearchResult]
    total_found: int = Field(
        description="Results matching the query and filters for this user, at least as many as"
        " the page holds. Exact in browse mode (matching documents), when the engine returned"
        " every candidate, and for hybrid/semantic without score_threshold or min_relevance"
        " (every visible chunk, or document with granularity=document, under the filter)."
        " Otherwise (bm25, or a score floor) a lower bound: the candidates the engine returned."
    )
    strong_found: int | None = Field(
        description="Of total_found, the strong matches: results whose chunk (with"
        " granularity=document, any chunk of the document read) has a cosine of at least 0.35"
        " with the query, or a BM25 score of at least half the search's best (docs/api.md,"
        " Strong matches). 0 with a query: nothing matched well. Counted among the candidates"
        " read: exact when they hold every strong match (with strong_only, read for it up to"
        " 1,000 per branch), else a lower bound; null when browsing."
    )
    verified_chunk_count: int
    dropped_document_count: int
    verification: Literal["ok", "skipped", "degraded"] = Field(
        description="Verify-on-read: ok (the source answered), skipped (no verify URL"
        " configured) or degraded (the source failed or ran out of time: results kept,"
        " fail-open)."
    )
    filters: AppliedFilters
    facets: dict[str, dict[str, int]] | None = Field(
        default=None,
        description="With include_facets only: visible matching documents per doc_type, tags,"
        " category, owner and top-level folder, each under all the other filters.",
    )
    reranked: bool | None = Field(
        default=None,
        description="Only when `rerank` was asked: whether the reranker reordered the first"
        " candidates (false: it failed or ran out of time, and the retrieval order is kept).",
    )
    timing_ms: Timing

    @classmethod
    def fields_of(
        cls,
        query: SearchQuery,
        outcome: SearchOutcome,
        with_excerpts: bool = True,
        links: LinkTemplates | None = None,
    ) -> dict[str, Any]:
        """The response's fields; `facets` only when asked for (absent otherwise)."""
        shaped: dict[str, Any] = {
            "query": query.text,
            "algorithm": query.algorithm.value,
            "algorithm_used": query.algorithm.value,
            "fusion": query.fusion.value,
            "granularity": query.granularity.value,
            "sort": query.order.value,
            "results": [
                SearchResult.of(
                    hit,
                    outcome.relevance.get(hit.id),
                    with_excerpts,
                    links,
                    None if outcome.strong is None else hit.id in outcome.strong,
                )
                for hit in outcome.hits
            ],
            "total_found": outcome.total_found,
            "strong_found": outcome.strong_found,
            "verified_chunk_count": outcome.verified_chunk_count,
            "dropped_document_count": outcome.dropped_document_count,
            "verification": outcome.verification.value,
            "filters": AppliedFilters.of(query.spec),
            "timing_ms": Timing(
                **{k: v for k, v in outcome.timing_ms.items() if k in Timing.model_fields}
            ),
        }
        if query.rerank:
            shaped["reranked"] = outcome.reranked
        if outcome.facets is not None:
            shaped["facets"] = outcome.facets
        return shaped


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


class FolderParams(FilterParams):
    """`GET /api/v1/folders`: the filters of `GET /viz/search` and the folder to list. Folder
    filters do not narrow the counts (the tree is what picks them), as a facet leaves out its
    own filter."""

    parent: str = Field(default="/", description="The folder whose subfolders to list.")


class Folder(BaseModel):
    path: str = Field(examples=["/Projects/Reports"])
    name: str = Field(examples=["Reports"])
    count: int = Field(description="Readable documents in it (any depth) under the filters.")
    has_children: bool = Field(description="Whether it has such subfolders in turn.")


class FoldersResponse(BaseModel):
    parent: str = Field(description="The parent as normalized.")
    folders: list[Folder]


class ChunkContextParams(BaseModel):
    """`GET /api/v1/chunk-context`: a result's document and chunk offsets."""

    model_config = ConfigDict(extra="forbid")

    doc_type: str = Field(min_length=1, max_length=32)
    doc_id: str = Field(min_length=1, max_length=256)
    start: int = Field(ge=0, description="The result's chunk_start_offset.")
    end: int = Field(ge=1, description="The result's chunk_end_offset.")
    context: int = Field(default=500, ge=0, le=MAX_CONTEXT, description="Characters each side.")


class ChunkContextResponse(BaseModel):
    success: bool = True
    chunk_text: str = Field(description="content[start:end]")
    before_context: str = Field(description="Up to `context` characters before it.")
    after_context: str = Field(description="Up to `context` characters after it.")
    has_more_before: bool
    has_more_after: bool
    chunk_index: int = Field(
        description="The chunk with these offsets (else the one holding start)."
    )
    total_chunks: int
    page_number: int | None = Field(
        default=None,
        description="That chunk's page, slide or sheet (1-based); null for unpaged documents.",
    )
