"""The search response on the wire, built from a search's outcome: its results, counts,
filters as applied, facets and timings."""

from typing import Any, Literal

from pydantic import BaseModel, Field

from app.filters.models import AppliedFilters
from app.filters.spec import format_timestamp
from app.search.algorithms import RelevanceSource
from app.search.links import LinkTemplates
from app.search.pages import page_of_match, query_words
from app.search.service import (
    RELEVANCE_DIGITS,
    Relevance,
    SearchOutcome,
    SearchQuery,
    SortOrder,
)
from app.store import fields
from app.store.base import Hit


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
        description="Paged files: the page (PDF), slide (PPTX, ODP) or sheet (XLSX, ODS) where"
        " the hit's matching text is, 1-based: the first page of the chunk holding a query word,"
        " else the page holding most of the chunk's text; null for unpaged documents."
    )
    page_start: int | None = Field(
        default=None, description="The page the chunk starts on (its whole range: to page_end)."
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
        words: frozenset[str] = frozenset(),
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
            page_number=page_of_match(p, words),
            page_start=p.get(fields.PAGE_NUMBER),
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
        words = query_words(query.text)
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
                    words,
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
