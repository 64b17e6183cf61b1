"""One search, end to end: encode -> candidates (deepened until the page fills) -> group ->
verify-on-read -> page, plus totals and facets. Every path (`/api/v1/search`, `/viz/search`,
every algorithm) comes through here."""

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum

from qdrant_client import models

from app.auth import Principal
from app.filters.conditions import build_filter
from app.filters.spec import FilterSpec
from app.search.algorithms import (
    FIRST_CHUNK,
    Algorithm,
    Bm25,
    Browse,
    Encoded,
    FusionMethod,
    Hybrid,
    QueryEncoder,
    SearchAlgorithm,
    Semantic,
)
from app.search.verify import DocRef, Verifier
from app.store.base import Hit, Store
from app.store.fields import DOC_KEY_FIELD

BASE_DEPTH = 100  # candidates per branch at least: keeps ranks stable from page to page
MAX_DEPTH = 40_000
FACET_LIMIT = 100


class Granularity(StrEnum):
    CHUNK = "chunk"
    DOCUMENT = "document"


@dataclass(frozen=True)
class SearchQuery:
    text: str = ""
    algorithm: Algorithm = Algorithm.HYBRID
    fusion: FusionMethod = FusionMethod.RRF
    granularity: Granularity = Granularity.CHUNK
    limit: int = 10
    offset: int = 0
    score_threshold: float = 0.0
    spec: FilterSpec = field(default_factory=FilterSpec)
    include_facets: bool = False

    @property
    def browse(self) -> bool:
        return not self.text.strip()


@dataclass
class SearchOutcome:
    hits: list[Hit]
    total_found: int
    verified_chunk_count: int
    dropped_document_count: int
    facets: dict[str, dict[str, int]] | None
    timing_ms: dict[str, float]
    query_vector: list[float] | None


def doc_ref(hit: Hit) -> DocRef:
    return (str(hit.payload["doc_type"]), str(hit.payload["doc_id"]))


def best_chunk_per_document(hits: list[Hit]) -> list[Hit]:
    seen: set[DocRef] = set()
    best = []
    for hit in hits:
        ref = doc_ref(hit)
        if ref not in seen:
            seen.add(ref)
            best.append(hit)
    return best


@dataclass
class _Verification:
    ok: set[DocRef] = field(default_factory=set)
    dropped: dict[DocRef, str] = field(default_factory=dict)
    seconds: float = 0.0


class SearchService:
    def __init__(
        self,
        store: Store,
        encoder: QueryEncoder,
        rrf_k: int,
        verifier: Verifier | None = None,
        forget_missing: Callable[[list[DocRef]], None] | None = None,
    ) -> None:
        self.store = store
        self.encoder = encoder
        self.rrf_k = rrf_k
        self.verifier = verifier
        self.forget_missing = forget_missing

    def algorithm_for(self, query: SearchQuery) -> SearchAlgorithm:
        if query.browse:
            return Browse(self.store)
        if query.algorithm is Algorithm.SEMANTIC:
            return Semantic(self.store)
        if query.algorithm is Algorithm.BM25:
            return Bm25(self.store)
        return Hybrid(self.store, query.fusion, self.rrf_k)

    def search(self, principal: Principal, query: SearchQuery) -> SearchOutcome:
        started = time.perf_counter()
        algorithm = self.algorithm_for(query)
        encoded = (
            Encoded()
            if query.browse
            else self.encoder.encode(
                query.text, dense=algorithm.needs_dense, sparse=algorithm.needs_sparse
            )
        )
        search_started = time.perf_counter()
        verification = _Verification()
        ranked, exhausted = self._fill_page(algorithm, encoded, principal, query, verification)
        page = ranked[query.offset : query.offset + query.limit]
        total = self._total_found(algorithm, principal, query, ranked, exhausted, verification)
        facets = (
            self.facets(principal, query.spec, set(verification.dropped))
            if query.include_facets
            else None
        )
        search_seconds = time.perf_counter() - search_started - verification.seconds
        if verification.dropped and self.forget_missing is not None:
            missing = [ref for ref, status in verification.dropped.items() if status == "missing"]
            if missing:
                self.forget_missing(missing)
        return SearchOutcome(
            hits=page,
            total_found=max(total, query.offset + len(page)) if page else total,
            verified_chunk_count=len(ranked[: query.offset + query.limit]),
            dropped_document_count=len(verification.dropped),
            facets=facets,
            timing_ms={
                "embed": round(encoded.seconds * 1000, 2),
                "search": round(search_seconds * 1000, 2),
                "verify": round(verification.seconds * 1000, 2),
                "total": round((time.perf_counter() - started) * 1000, 2),
            },
            query_vector=encoded.dense,
        )

    def _fill_page(
        self,
        algorithm: SearchAlgorithm,
        encoded: Encoded,
        principal: Principal,
        query: SearchQuery,
        verification: _Verification,
    ) -> tuple[list[Hit], bool]:
        """Deepen the candidate pool until `offset + limit` results survive grouping and
        verification, or the engine has nothing more: a selective filter never under-fills."""
        wanted = query.offset + query.limit
        factor = 3 if query.granularity is Granularity.DOCUMENT else 1
        depth = max(BASE_DEPTH, wanted * factor)
        threshold = query.score_threshold or None
        while True:
            hits = algorithm.candidates(
                query=encoded,
                principal=principal,
                spec=query.spec,
                depth=depth,
                score_threshold=threshold,
            )
            exhausted = len(hits) < depth
            ranked = self._rank(algorithm.ordered(hits), query.granularity, verification)
            if self._verify(principal, ranked[:wanted], verification):
                continue  # some were dropped: rank again without them
            if len(ranked) >= wanted or exhausted or depth >= MAX_DEPTH:
                return ranked, exhausted
            depth = min(MAX_DEPTH, depth * 2)

    @staticmethod
    def _rank(hits: list[Hit], granularity: Granularity, verification: _Verification) -> list[Hit]:
        kept = [hit for hit in hits if doc_ref(hit) not in verification.dropped]
        return best_chunk_per_document(kept) if granularity is Granularity.DOCUMENT else kept

    def _verify(self, principal: Principal, window: list[Hit], verification: _Verification) -> bool:
        """Ask the source about documents not asked before; True if any was dropped."""
        if self.verifier is None:
            return False
        unknown = list(
            dict.fromkeys(
                ref
                for ref in map(doc_ref, window)
                if ref not in verification.ok and ref not in verification.dropped
            )
        )
        if not unknown:
            return False
        started = time.perf_counter()
        dropped = self.verifier.statuses(principal.user, unknown)
        verification.seconds += time.perf_counter() - started
        verification.dropped.update(dropped)
        verification.ok.update(ref for ref in unknown if ref not in dropped)
        return bool(dropped)

    def _total_found(
        self,
        algorithm: SearchAlgorithm,
        principal: Principal,
        query: SearchQuery,
        ranked: list[Hit],
        exhausted: bool,
        verification: _Verification,
    ) -> int:
        """Exact where the engine can count (browse; dense-backed ranking without a threshold,
        where every visible chunk under the filter is a match); else what was retrieved."""
        if exhausted:
            return len(ranked)
        if query.browse:
            selector = algorithm.filter(principal, query.spec)
        elif algorithm.needs_dense and not query.score_threshold:
            per_document = query.granularity is Granularity.DOCUMENT
            selector = build_filter(principal, query.spec, *([FIRST_CHUNK] if per_document else []))
        else:
            return len(ranked)
        return max(len(ranked), self.store.count(_excluding(selector, set(verification.dropped))))

    def facets(
        self, principal: Principal, spec: FilterSpec, dropped: set[DocRef] | None = None
    ) -> dict[str, dict[str, int]]:
        """Per chip: visible matching documents under all the *other* filters (documents that
        verify-on-read dropped left out)."""
        without = {
            "doc_type": ("doc_type", replace(spec, doc_types=())),
            "tags": ("tags", replace(spec, tags=(), tags_all=())),
            "category": ("category", replace(spec, categories=())),
            "owner": ("owner", replace(spec, owners=())),
            "folders": ("top_folder", replace(spec, path_prefixes=())),
        }
        return {
            name: self.store.facet(
                key, _excluding(build_filter(principal, other, FIRST_CHUNK), dropped), FACET_LIMIT
            )
            for name, (key, other) in without.items()
        }


def _excluding(selector: models.Filter, dropped: set[DocRef] | None) -> models.Filter:
    if not dropped:
        return selector
    keys = [f"{doc_type}:{doc_id}" for doc_type, doc_id in sorted(dropped)]
    gone = models.FieldCondition(key=DOC_KEY_FIELD, match=models.MatchAny(any=keys))
    return models.Filter(must=selector.must, must_not=[gone])
