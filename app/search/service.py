"""One search, end to end: encode -> candidates (deepened until the page fills) -> group ->
verify-on-read -> page, plus totals and facets. Every path (`/api/v1/search`, `/viz/search`,
every algorithm) comes through here."""

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum

from app.auth import Principal
from app.filters.conditions import FACET_KEYS, SearchFilter, search_filter
from app.filters.selectors import chunks
from app.filters.spec import FilterSpec
from app.search.algorithms import (
    CANDIDATE_KEYS,
    EXACT_LOOKAHEAD,
    NO_PAYLOAD,
    Algorithm,
    Bm25,
    Browse,
    Encoded,
    FusionMethod,
    Hybrid,
    QueryEncoder,
    RelevanceSource,
    SearchAlgorithm,
    Semantic,
)
from app.search.rerank import Reranker
from app.search.verify import DocRef, Verification, VerifyBudget, VerifySource
from app.store import fields
from app.store.base import Hit, Store

# Candidates per branch at least: fused ranks depend on the depth, so pages stay consistent
# (nothing repeated or skipped) while offset + limit <= BASE_DEPTH. 50, not 100: Vaswani's first
# page scores the same (nDCG@10 0.5164 against 0.5163, `bench.quality.depth`), and a hybrid search
# over HTTP takes 0.71x as long on the users' 100k, 0.84x at 1M (docs/benchmarks.md, "Eighth
# pass").
BASE_DEPTH = 50
MAX_DEPTH = 40_000
DATE_SORT_DEPTH = 1_000  # a date sort reads every match: start deeper, fewer rounds
STRONG_COUNT_DEPTH = 1_000  # strong_only counts its matches this deep at least (else a bound)
FACET_LIMIT = 100
WARM_UP_TEXT = "the first search after a start"


class Granularity(StrEnum):
    CHUNK = "chunk"
    DOCUMENT = "document"


class SortOrder(StrEnum):
    RELEVANCE = "relevance"
    NEWEST = "newest"
    OLDEST = "oldest"


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
    # A floor on each result's relevance (SearchAlgorithm.relevance), before paging and counting.
    min_relevance: float | None = None
    dense_weight: float | None = None  # hybrid; None: the fusion's default
    feedback: bool = False  # expand the query from its first results (app.search.feedback)
    rerank: bool = False  # reorder the first candidates with the reranker, if one is set
    strong_only: bool = False  # keep only the strong matches (SearchAlgorithm.strong)
    sort: SortOrder | None = None  # None: relevance for a query, newest when browsing

    @property
    def browse(self) -> bool:
        return not self.text.strip()

    @property
    def order(self) -> SortOrder:
        """The sort applied: browsing has no relevance to sort by, so newest first."""
        if self.sort is None or (self.browse and self.sort is SortOrder.RELEVANCE):
            return SortOrder.NEWEST if self.browse else SortOrder.RELEVANCE
        return self.sort

    @property
    def by_date(self) -> bool:
        """A query's results sorted by date: the whole result set is ranked, then sorted."""
        return not self.browse and self.order is not SortOrder.RELEVANCE

    @property
    def engine_threshold(self) -> float:
        """The score floor the engine applies (0: none)."""
        if self.min_relevance is not None and self.algorithm is Algorithm.SEMANTIC:
            return max(self.score_threshold, self.min_relevance)
        return self.score_threshold

    @property
    def floored(self) -> bool:
        return bool(self.engine_threshold) or self.min_relevance is not None


@dataclass(frozen=True)
class Relevance:
    value: float
    source: RelevanceSource


@dataclass
class SearchOutcome:
    hits: list[Hit]
    total_found: int
    verified_chunk_count: int
    dropped_document_count: int
    verification: Verification
    facets: dict[str, dict[str, int]] | None
    timing_ms: dict[str, float]
    query_vector: list[float] | None
    relevance: dict[str, Relevance] = field(default_factory=dict)  # by point id; none browsing
    reranked: bool = False
    strong_found: int | None = None  # None browsing
    strong: set[str] | None = None  # the page's strong matches, by point id; None browsing


@dataclass
class _Pool:
    """The ranked results a search read, and which of them are strong matches."""

    ranked: list[Hit]
    exhausted: bool  # nothing more can qualify
    strong: Callable[[Hit], bool] | None = None  # None: browsing

    def strong_found(self, ranked: list[Hit]) -> int | None:
        return None if self.strong is None else sum(map(self.strong, ranked))


@dataclass
class _Rerank:
    """What the reranker did to one search."""

    ranked: list[Hit]
    relevance: dict[str, Relevance]
    reranked: bool = False
    dropped: int = 0  # reranked below min_relevance
    seconds: float = 0.0


def doc_ref(hit: Hit) -> DocRef:
    return (str(hit.payload[fields.DOC_TYPE]), str(hit.payload[fields.DOC_ID]))


RELEVANCE_DIGITS = 6  # as responses show it
# A relevance shown (rounded) and sent back as min_relevance keeps its own result.
_SHOWN = 0.5 * 10**-RELEVANCE_DIGITS


def reaches(relevance: float, min_relevance: float | None) -> bool:
    return min_relevance is None or relevance >= min_relevance - _SHOWN


def relevance_of(algorithm: SearchAlgorithm, ranked: list[Hit]) -> dict[str, Relevance]:
    source = algorithm.relevance_source
    if source is None or not ranked:
        return {}
    best = max(hit.score for hit in ranked)  # the first, unless sorted by date
    return {hit.id: Relevance(algorithm.relevance(hit.score, best), source) for hit in ranked}


def at_least(
    algorithm: SearchAlgorithm, ranked: list[Hit], min_relevance: float | None
) -> list[Hit]:
    """The hits whose relevance reaches `min_relevance` (all of them without one)."""
    if min_relevance is None or algorithm.relevance_source is None or not ranked:
        return ranked
    best = ranked[0].score
    return [hit for hit in ranked if reaches(algorithm.relevance(hit.score, best), min_relevance)]


def sorted_by_date(ranked: list[Hit], order: SortOrder) -> list[Hit]:
    """Newest (or oldest) first; equal dates by relevance (the algorithm's score orders the
    same way), then by document and point id so pages neither repeat nor skip."""
    sign = -1 if order is SortOrder.NEWEST else 1

    def key(hit: Hit) -> tuple[int, float, str, str, str]:
        doc_type, doc_id = doc_ref(hit)
        return (sign * int(hit.payload[fields.MODIFIED_AT]), -hit.score, doc_type, doc_id, hit.id)

    return sorted(ranked, key=key)


def best_chunk_per_document(hits: list[Hit]) -> list[Hit]:
    seen: set[DocRef] = set()
    best = []
    for hit in hits:
        ref = doc_ref(hit)
        if ref not in seen:
            seen.add(ref)
            best.append(hit)
    return best


SearchObserver = Callable[[SearchQuery, SearchOutcome], None]


@dataclass
class _Verification:
    budget: VerifyBudget | None  # None: no verifier configured
    ok: set[DocRef] = field(default_factory=set)
    dropped: dict[DocRef, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def status(self) -> Verification:
        if self.budget is None:
            return Verification.SKIPPED
        return Verification.DEGRADED if self.budget.degraded else Verification.OK

    @property
    def dropped_keys(self) -> list[str]:
        return [fields.doc_key(*ref) for ref in self.dropped]

    def window(self, wanted: int) -> int:
        """How many of the ranked results the next round verifies: twice as many after each
        round that dropped some."""
        return wanted << (self.budget.rounds if self.budget else 0)


class SearchService:
    def __init__(
        self,
        store: Store,
        encoder: QueryEncoder,
        rrf_k: int,
        verifier: VerifySource | None = None,
        forget_missing: Callable[[list[DocRef]], None] | None = None,
        observer: SearchObserver | None = None,
        reranker: Reranker | None = None,
        deadline: float = 2.0,
    ) -> None:
        self.store = store
        self.encoder = encoder
        self.rrf_k = rrf_k
        self.verifier = verifier
        self.forget_missing = forget_missing
        self.observer = observer  # told of every search done (metrics, the slow-search log)
        self.reranker = reranker
        self.deadline = deadline  # one search's time for the verifier and the reranker

    def algorithm_for(self, query: SearchQuery) -> SearchAlgorithm:
        if query.browse:
            return Browse(self.store, oldest=query.order is SortOrder.OLDEST)
        if query.algorithm is Algorithm.SEMANTIC:
            return Semantic(self.store, query.feedback)
        if query.algorithm is Algorithm.BM25:
            return Bm25(self.store, query.feedback)
        return Hybrid(self.store, query.fusion, self.rrf_k, query.dense_weight, query.feedback)

    def _encode(self, algorithm: SearchAlgorithm, query: SearchQuery) -> Encoded:
        if query.browse:
            return Encoded()
        return self.encoder.encode(
            query.text, dense=algorithm.needs_dense, sparse=algorithm.needs_sparse
        )

    def warm_up(self) -> None:
        """A default search of every chunk before the service says it is ready, its answer
        dropped (no user asks it: nothing of it leaves this method). The first search after a
        start otherwise pays for the first calls of the query model, of the engine's search
        structures and of the code between them: at 1M chunks its search took 36-48 ms where
        the next ones took 15-26 ms, in the first second's p99."""
        query = SearchQuery(text=WARM_UP_TEXT)
        algorithm = self.algorithm_for(query)
        hits = algorithm.candidates(
            query=self._encode(algorithm, query),
            where=chunks(),
            depth=BASE_DEPTH,
            score_threshold=None,
            payload_keys=NO_PAYLOAD,
        )
        self._with_payloads(hits[: query.limit])

    def search(self, principal: Principal, query: SearchQuery) -> SearchOutcome:
        started = time.perf_counter()
        algorithm = self.algorithm_for(query)
        encoded = self._encode(algorithm, query)
        search_started = time.perf_counter()
        where = search_filter(principal, query.spec)
        verification = _Verification(self.verifier.budget() if self.verifier else None)
        # The reranker reorders a relevance ranking; a date sort has none to reorder.
        reranker = self.reranker if query.rerank and query.order is SortOrder.RELEVANCE else None
        wanted = query.offset + query.limit
        if reranker is not None:  # every candidate it may bring up is verified
            wanted = max(wanted, reranker.top_n)
        pool = self._fill_page(algorithm, encoded, principal, where, query, verification, wanted)
        ranked, exhausted = pool.ranked, pool.exhausted
        reranking = _Rerank(ranked, relevance_of(algorithm, ranked))
        if reranker is not None:
            reranking = self._rerank(reranker, query, reranking, verification.budget)
        ranked = reranking.ranked
        page = self._with_payloads(ranked[query.offset : query.offset + query.limit])
        visible = where.excluding(verification.dropped_keys)
        total = self._total_found(algorithm, visible, query, ranked, exhausted) - reranking.dropped
        facets_started = time.perf_counter()
        facets = self._facets(visible) if query.include_facets else None
        facets_seconds = time.perf_counter() - facets_started
        search_seconds = time.perf_counter() - search_started - verification.seconds
        if verification.dropped and self.forget_missing is not None:
            missing = [ref for ref, status in verification.dropped.items() if status == "missing"]
            if missing:
                self.forget_missing(missing)
        outcome = SearchOutcome(
            hits=page,
            total_found=max(total, query.offset + len(page)) if page else total,
            verified_chunk_count=len(ranked[: query.offset + query.limit]),
            dropped_document_count=len(verification.dropped),
            verification=verification.status,
            facets=facets,
            timing_ms={
                "embed": round(encoded.seconds * 1000, 2),
                "search": round((search_seconds - reranking.seconds) * 1000, 2),  # engine, facets
                "engine": round((search_seconds - reranking.seconds - facets_seconds) * 1000, 2),
                "facets": round(facets_seconds * 1000, 2),
                "verify": round(verification.seconds * 1000, 2),
                "total": round((time.perf_counter() - started) * 1000, 2),
            }
            | ({"rerank": round(reranking.seconds * 1000, 2)} if reranker is not None else {}),
            query_vector=encoded.dense,
            relevance=reranking.relevance,
            reranked=reranking.reranked,
            strong_found=pool.strong_found(ranked),
            strong=None if pool.strong is None else {hit.id for hit in page if pool.strong(hit)},
        )
        if self.observer is not None:
            self.observer(query, outcome)
        return outcome

    def _rerank(
        self,
        reranker: Reranker,
        query: SearchQuery,
        current: _Rerank,
        budget: VerifyBudget | None,
    ) -> _Rerank:
        """The first `top_n` candidates in the reranker's order, with its relevance; the rest
        (and everything, if it fails or runs out of the search's time) in retrieval order."""
        started = time.perf_counter()
        top = self._with_payloads(current.ranked[: reranker.top_n])
        seconds = budget.remaining() if budget is not None else self.deadline
        texts = [fields.chunk_text(hit.payload) for hit in top]
        order = reranker.rerank(query.text, texts, seconds)
        if order is None:
            return replace(current, seconds=time.perf_counter() - started)
        relevance = dict(current.relevance)
        chosen: list[Hit] = []
        dropped = 0
        for ranked in order:
            hit = top[ranked.index]
            relevance[hit.id] = Relevance(ranked.score, RelevanceSource.RERANK)
            if reaches(ranked.score, query.min_relevance):
                chosen.append(hit)
            else:
                dropped += 1
        answered = {top[ranked.index].id for ranked in order}
        left_out = [hit for hit in top if hit.id not in answered]
        rest = current.ranked[reranker.top_n :]
        return _Rerank(
            chosen + left_out + rest, relevance, True, dropped, time.perf_counter() - started
        )

    def _fill_page(
        self,
        algorithm: SearchAlgorithm,
        encoded: Encoded,
        principal: Principal,
        where: SearchFilter,
        query: SearchQuery,
        verification: _Verification,
        wanted: int,
    ) -> _Pool:
        """Deepen the candidate pool until `wanted` results survive grouping, the relevance
        floor and verification, or the engine has nothing more: a selective filter never
        under-fills. Documents verification dropped leave the engine's filter too (so query
        feedback never reads them). A date sort needs the whole result set (up to MAX_DEPTH
        candidates), sorted before the page is verified."""
        factor = 3 if query.granularity is Granularity.DOCUMENT else 1
        if algorithm.exact_order:
            depth = verification.window(wanted) + EXACT_LOOKAHEAD
        else:
            depth = max(DATE_SORT_DEPTH if query.by_date else BASE_DEPTH, wanted * factor)
        threshold = query.engine_threshold or None
        # Browse orders and grouping groups every candidate by its keys; otherwise only the
        # ones verify asks about need them, fetched then (at 100k chunks, reading the keys of
        # 100 candidates held the GIL ~0.9 ms against ~3.6 ms for the hybrid query itself).
        every_key = (
            algorithm.per_document or query.granularity is Granularity.DOCUMENT or query.by_date
        )
        keys = CANDIDATE_KEYS if every_key else NO_PAYLOAD
        while True:
            selector = where.excluding(verification.dropped_keys).selector(
                first_chunk=algorithm.per_document
            )
            hits = algorithm.candidates(
                query=encoded,
                where=selector,
                depth=depth,
                score_threshold=threshold,
                payload_keys=keys,
            )
            exhausted = len(hits) < depth
            strong = self._strong_test(algorithm, hits, query.granularity)
            if query.strong_only and strong is not None and algorithm.strong is not None:
                hits = [hit for hit in hits if strong(hit)]
                exhausted = exhausted or algorithm.strong.complete
            ranked = self._rank(algorithm.ordered(hits), query.granularity, verification)
            floored = at_least(algorithm, ranked, query.min_relevance)
            # Below the floor here, below it deeper too: nothing more can qualify.
            exhausted = exhausted or len(floored) < len(ranked)
            ranked = sorted_by_date(floored, query.order) if query.by_date else floored
            if self._verify(principal, ranked, wanted, verification):
                if algorithm.exact_order:  # as deep as the next, doubled window
                    depth = max(depth, verification.window(wanted) + EXACT_LOOKAHEAD)
                continue  # some were dropped: rank again without them
            # Filled: the page; with strong_only every strong match (to a depth: counting them
            # costs deeper rounds, paid only where asked for); for a date sort every match.
            found = algorithm.strong
            counted = not query.strong_only or found is None or found.complete
            counted = counted or depth >= STRONG_COUNT_DEPTH
            filled = len(ranked) >= wanted and counted and not query.by_date
            if filled or exhausted or depth >= MAX_DEPTH:
                return _Pool(ranked, exhausted, strong)
            depth = min(MAX_DEPTH, depth * 2)

    def _strong_test(
        self, algorithm: SearchAlgorithm, hits: list[Hit], granularity: Granularity
    ) -> Callable[[Hit], bool] | None:
        """Whether a result is a strong match: its chunk is one, or, a result standing for its
        document, any chunk of the document read is one."""
        if algorithm.strong is None:
            return None
        ids = algorithm.strong.ids
        if granularity is Granularity.CHUNK:
            return lambda hit: hit.id in ids
        documents = {doc_ref(hit) for hit in self._with_keys(hits) if hit.id in ids}
        return lambda hit: doc_ref(hit) in documents

    def _with_payloads(self, page: list[Hit]) -> list[Hit]:
        """The page's hits with their whole payloads (candidates carry CANDIDATE_KEYS only);
        a point deleted since it was ranked leaves the page."""
        if not page:
            return page
        stored = {hit.id: hit.payload for hit in self.store.retrieve([hit.id for hit in page])}
        return [Hit(hit.id, hit.score, stored[hit.id]) for hit in page if hit.id in stored]

    def _with_keys(self, hits: list[Hit]) -> list[Hit]:
        """The hits with CANDIDATE_KEYS, read for those that came without; a point deleted
        since it was ranked leaves them."""
        lacking = [hit.id for hit in hits if not hit.payload]
        if not lacking:
            return hits
        stored = {hit.id: hit.payload for hit in self.store.retrieve(lacking, CANDIDATE_KEYS)}
        return [
            hit if hit.payload else Hit(hit.id, hit.score, stored[hit.id])
            for hit in hits
            if hit.payload or hit.id in stored
        ]

    def _rank(
        self, hits: list[Hit], granularity: Granularity, verification: _Verification
    ) -> list[Hit]:
        if not verification.dropped and granularity is Granularity.CHUNK:
            return hits
        kept = [hit for hit in self._with_keys(hits) if doc_ref(hit) not in verification.dropped]
        return best_chunk_per_document(kept) if granularity is Granularity.DOCUMENT else kept

    def _verify(
        self, principal: Principal, ranked: list[Hit], wanted: int, verification: _Verification
    ) -> bool:
        """Ask the source about documents of the page not asked before; True if any was
        dropped. After a round that dropped some, the next one looks twice as far ahead, so a
        source that rejects long runs costs a few rounds, not one per page."""
        if self.verifier is None or verification.budget is None:
            return False
        window = self._with_keys(ranked[: verification.window(wanted)])
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
        dropped = self.verifier.statuses(principal.user, unknown, verification.budget)
        verification.seconds += time.perf_counter() - started
        verification.dropped.update(dropped)
        verification.ok.update(ref for ref in unknown if ref not in dropped)
        return bool(dropped)

    def _total_found(
        self,
        algorithm: SearchAlgorithm,
        visible: SearchFilter,
        query: SearchQuery,
        ranked: list[Hit],
        exhausted: bool,
    ) -> int:
        """Exact where the engine can count (browse; dense-backed ranking without a score
        floor, where every visible chunk under the filter is a match); else what was retrieved.
        `visible` leaves out what verify-on-read dropped."""
        if exhausted:
            return len(ranked)
        if query.browse:
            per_document = True
        elif algorithm.needs_dense and not query.floored:
            per_document = query.granularity is Granularity.DOCUMENT
        else:
            return len(ranked)
        return max(len(ranked), self.store.count(visible.selector(first_chunk=per_document)))

    def _facets(self, visible: SearchFilter) -> dict[str, dict[str, int]]:
        """Per chip: visible matching documents under all the *other* filters."""
        return {
            facet.value: self.store.facet(
                key, visible.selector(first_chunk=True, without=facet), FACET_LIMIT
            )
            for facet, key in FACET_KEYS.items()
        }
