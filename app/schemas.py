"""Request and response bodies of the HTTP contract (API.md), shared by every route."""

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)
from pydantic.json_schema import WithJsonSchema

from app.errors import InvalidRequest, describe_validation
from app.filters.spec import (
    FilterSpec,
    check_date_range,
    clean_values,
    format_timestamp,
    normalize_path_prefixes,
    parse_modified_timestamp,
)
from app.search.algorithms import Algorithm, FusionMethod
from app.search.service import Granularity, SearchOutcome, SearchQuery
from app.store.base import Hit

DATE_SCHEMA = WithJsonSchema(
    {
        "anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}, {"type": "null"}],
        "description": "RFC 3339 / ISO 8601 datetime (naive = UTC, date alone = midnight UTC) or"
        " Unix seconds (integer or digit string; a fraction is truncated). null or blank = open.",
        "examples": ["2026-01-01T00:00:00Z", 1767225600],
    }
)
DateBound = Annotated[Any, DATE_SCHEMA]
StringList = list[StrictStr] | None


class FilterFields(BaseModel):
    """The rich filters, shared by every search path."""

    model_config = ConfigDict(extra="ignore")

    doc_types: StringList = Field(default=None, description="Any of these document types.")
    modified_after: DateBound = Field(default=None, description="Inclusive lower bound.")
    modified_before: DateBound = Field(default=None, description="Inclusive upper bound.")
    path_prefixes: StringList = Field(
        default=None,
        description="Up to 20 folders (OR). A folder matches files equal to it or below it,"
        " segment by segment; case-sensitive; documents without file_path never match.",
    )
    path_prefix: StrictStr | None = Field(
        default=None, description="Legacy single folder, folded into path_prefixes (first)."
    )
    tags: StringList = Field(default=None, description="Any of these tags.")
    tags_all: StringList = Field(default=None, description="All of these tags.")
    categories: StringList = Field(default=None, description="Any of these categories.")
    owners: StringList = Field(
        default=None, description="Any of these owners (within what the user may see)."
    )

    @field_validator("modified_after", "modified_before", mode="before")
    @classmethod
    def _parse_date(cls, value: Any, info: Any) -> int | None:
        try:
            return parse_modified_timestamp(value, info.field_name)
        except InvalidRequest as exc:
            raise ValueError(exc.message) from exc

    @classmethod
    def parse(cls, data: dict[str, Any]) -> "FilterFields":
        """Validate outside FastAPI's body parsing (query strings): errors become 400s too."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise InvalidRequest(*describe_validation(exc.errors())) from exc

    def to_spec(self) -> FilterSpec:
        check_date_range(self.modified_after, self.modified_before)
        return FilterSpec(
            doc_types=clean_values(self.doc_types),
            modified_after=self.modified_after,
            modified_before=self.modified_before,
            path_prefixes=normalize_path_prefixes(self.path_prefix, self.path_prefixes),
            tags=clean_values(self.tags),
            tags_all=clean_values(self.tags_all),
            categories=clean_values(self.categories),
            owners=clean_values(self.owners),
        )


class SearchBody(FilterFields):
    """`POST /api/v1/search`."""

    query: StrictStr = Field(default="", max_length=10_000, description="Empty = browse.")
    limit: StrictInt = Field(default=10, ge=1, le=100)
    offset: StrictInt = Field(default=0, ge=0, le=10_000)
    algorithm: Algorithm = Algorithm.HYBRID
    fusion: FusionMethod = FusionMethod.RRF
    granularity: Granularity = Granularity.CHUNK
    score_threshold: float = Field(default=0.0, ge=0, allow_inf_nan=False, strict=True)
    include_facets: StrictBool = False
    # Fields the Astrolabe app's PHP client sends (docs/astrolabe.md).
    include_chunks: StrictBool = Field(default=True, description="false: excerpts are empty.")
    include_pca: StrictBool = Field(
        default=False, description="Add coordinates_3d, query_coords and pca_variance."
    )
    rerank: StrictBool = Field(
        default=False, description="No reranker is configured: true answers 422."
    )
    min_relevance: float | None = Field(
        default=None,
        ge=0,
        le=1,
        strict=True,
        description="semantic: minimum cosine similarity; bm25 / hybrid (no fixed score scale):"
        " minimum score relative to the best result of the page.",
    )

    def to_query(self) -> SearchQuery:
        return SearchQuery(
            text=self.query,
            algorithm=self.algorithm,
            fusion=self.fusion,
            granularity=self.granularity,
            limit=self.limit,
            offset=self.offset,
            score_threshold=self._threshold(),
            spec=self.to_spec(),
            include_facets=self.include_facets,
        )

    def _threshold(self) -> float:
        """min_relevance is a cosine floor for semantic; other scores are cut relative to the
        best result after ranking (app.compat.drop_less_relevant)."""
        if self.min_relevance is not None and self.algorithm is Algorithm.SEMANTIC:
            return max(self.score_threshold, self.min_relevance)
        return self.score_threshold


class AppliedFilters(BaseModel):
    doc_types: list[str]
    modified_after: str | None
    modified_before: str | None
    path_prefixes: list[str]
    tags: list[str]
    tags_all: list[str]
    categories: list[str]
    owners: list[str]

    @classmethod
    def of(cls, spec: FilterSpec) -> "AppliedFilters":
        return cls(
            doc_types=list(spec.doc_types),
            modified_after=format_timestamp(spec.modified_after),
            modified_before=format_timestamp(spec.modified_before),
            path_prefixes=list(spec.path_prefixes),
            tags=list(spec.tags),
            tags_all=list(spec.tags_all),
            categories=list(spec.categories),
            owners=list(spec.owners),
        )


class SearchResult(BaseModel):
    doc_type: str
    doc_id: str
    id: str = Field(description="The document id again (what the Astrolabe app reads).")
    title: str
    excerpt: str
    score: float
    chunk_index: int
    total_chunks: int
    owner: str
    modified_at: str
    file_path: str | None
    tags: list[str]
    category: str | None
    mime_type: str | None
    path: str | None = Field(description="file_path again (what the Astrolabe app reads).")

    @classmethod
    def of(cls, hit: Hit, with_excerpt: bool = True) -> "SearchResult":
        p = hit.payload
        return cls(
            doc_type=p["doc_type"],
            doc_id=p["doc_id"],
            id=p["doc_id"],
            path=p.get("file_path"),
            title=p.get("title") or "",
            excerpt=(p.get("text") or "") if with_excerpt else "",
            score=round(hit.score, 6),
            chunk_index=int(p["chunk_index"]),
            total_chunks=int(p["total_chunks"]),
            owner=p["owner"],
            modified_at=format_timestamp(int(p["modified_at"])) or "",
            file_path=p.get("file_path"),
            tags=list(p.get("tags") or []),
            category=p.get("category"),
            mime_type=p.get("mime_type"),
        )


class Timing(BaseModel):
    embed: float
    search: float
    verify: float
    total: float


class SearchResponse(BaseModel):
    query: str
    algorithm: Literal["hybrid", "semantic", "bm25"]
    algorithm_used: Literal["hybrid", "semantic", "bm25"] = Field(
        description="algorithm again (what the Astrolabe app reads)."
    )
    fusion: Literal["rrf", "dbsf"]
    granularity: Literal["chunk", "document"]
    results: list[SearchResult]
    total_found: int = Field(
        description="Results matching the query and filters for this user, at least as many as"
        " the page holds. Exact in browse mode (matching documents), when the engine returned"
        " every candidate, and for hybrid/semantic without score_threshold (every visible chunk,"
        " or document with granularity=document, under the filter). Otherwise (bm25, or a"
        " score_threshold) a lower bound: the candidates the engine returned."
    )
    verified_chunk_count: int
    dropped_document_count: int
    filters: AppliedFilters
    facets: dict[str, dict[str, int]] | None = Field(
        default=None,
        description="With include_facets: visible matching documents per doc_type, tags,"
        " category, owner and top-level folder, each under all the other filters.",
    )
    timing_ms: Timing

    @classmethod
    def of(
        cls, query: SearchQuery, outcome: SearchOutcome, with_excerpts: bool = True
    ) -> "SearchResponse":
        return cls(
            query=query.text,
            algorithm=query.algorithm.value,
            algorithm_used=query.algorithm.value,
            fusion=query.fusion.value,
            granularity=query.granularity.value,
            results=[SearchResult.of(hit, with_excerpts) for hit in outcome.hits],
            total_found=outcome.total_found,
            verified_chunk_count=outcome.verified_chunk_count,
            dropped_document_count=outcome.dropped_document_count,
            filters=AppliedFilters.of(query.spec),
            facets=outcome.facets,
            timing_ms=Timing(**outcome.timing_ms),
        )
