"""The search algorithms. Each one asks the engine for the best `depth` chunks under the search
filter (`app.filters.conditions`), applied inside the engine on every branch before fusion, and
says how relevant each one is on a [0, 1] scale (`relevance`)."""

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from qdrant_client.http import models

from app.embeddings.dense import DenseEncoder
from app.embeddings.sparse import Bm25Encoder
from app.filters.selectors import Selector, modified_at
from app.search import feedback
from app.search.fusion import Branch, Fusion, FusionMethod, branch_weights
from app.search.fusion_defaults import DEFAULT_DENSE_WEIGHT
from app.store import fields
from app.store.base import Hit, Query, Store
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR

# What ranking, grouping and verify read from a candidate; the rest of the payload (the text
# above all) is read for the page shown only.
CANDIDATE_KEYS = (fields.DOC_TYPE, fields.DOC_ID, fields.MODIFIED_AT)
NO_PAYLOAD: tuple[str, ...] = ()
EXACT_LOOKAHEAD = 10  # candidates past the page, for an algorithm with an `exact_order`
MAX_TIED = 1_000  # documents of one date that a browse orders by id; past it, the engine's order


class Algorithm(StrEnum):
    HYBRID = "hybrid"
    SEMANTIC = "semantic"
    BM25 = "bm25"


class RelevanceSource(StrEnum):
    COSINE = "cosine"
    BM25 = "bm25_normalised"
    FUSION = "fusion_normalised"
    RERANK = "rerank"


# A strong match: a chunk whose cosine with the query reaches STRONG_COSINE, or whose BM25
# score reaches STRONG_BM25_SHARE of the search's best BM25 score (so it shares the query's
# rarest words). Calibrated by bench.quality.strong_matches (docs/api.md, "Strong matches"): on the
# demo corpus no nonsense query reaches 0.35 (best 0.28) and every real one does (lowest 0.355);
# on Vaswani 3 of 50 random-letter queries reach it (best 0.375) and every real query does.
# With queries on the int8 graph: nonsense at most 0.26 (demo) and 0.353 (Vaswani, 1 of 50); every
# real query reaches it but the demo's `vacation` (0.334).
STRONG_COSINE = 0.35
STRONG_BM25_SHARE = 0.5


@dataclass
class StrongMatches:
    """The strong matches among the candidates read, and whether they are all of them (each
    branch was read down below its floor, or to its end)."""

    ids: set[str]
    complete: bool


def strong_in(hits: list[Hit], floor: float, depth: int) -> StrongMatches:
    """Of one branch's hits (best first, `depth` asked for)."""
    ids = {hit.id for hit in hits if hit.score >= floor}
    return StrongMatches(ids, len(hits) < depth or len(ids) < len(hits))


def bm25_floor(hits: list[Hit]) -> float:
    return STRONG_BM25_SHARE * hits[0].score if hits else 0.0


# FusionMethod lives in app.search.fusion; the request models import it from here too.
__all__ = ["FusionMethod", "RelevanceSource"]


@dataclass
class Encoded:
    """The query as vectors, with the time it took to encode it."""

    dense: list[float] | None = None
    sparse: models.SparseVector | None = None
    seconds: float = 0.0

    @property
    def has_terms(self) -> bool:
        return self.sparse is not None and bool(self.sparse.indices)


@dataclass(frozen=True)
class Wanted:
    """What one call to `candidates` asks for: the best `depth` chunks under `where`, scoring
    at least `score_threshold` on the algorithm's own scale, each with `payload_keys`."""

    where: Selector
    depth: int
    score_threshold: float | None = None
    payload_keys: Sequence[str] = NO_PAYLOAD

    def query(self, query: models.Query, using: str | None = None) -> Query:
        """The engine query for it, scoring with `using` (None: ordered by `query`)."""
        return Query(query, self.depth, using, self.where, self.score_threshold, self.payload_keys)


@dataclass
class QueryEncoder:
    dense: DenseEncoder
    sparse: Bm25Encoder

    def encode(self, text: str, *, dense: bool, sparse: bool) -> Encoded:
        start = time.perf_counter()
        encoded = Encoded(
            dense=self.dense.encode([text])[0] if dense else None,
            sparse=self.sparse.encode_query(text) if sparse else None,
        )
        encoded.seconds = time.perf_counter() - start
        return encoded


class SearchAlgorithm(ABC):
    """Ranks chunks for a query. `candidates` is called with growing `depth` until a page fills;
    its hits carry `payload_keys` (CANDIDATE_KEYS, or NO_PAYLOAD where nothing reads them).
    With `feedback`, the query is first expanded from its own first results (app.search.feedback)
    under the same filter."""

    needs_dense = False
    needs_sparse = False
    per_document = False  # True: candidates are first chunks only, one per document
    # True: `candidates` come in the final order (`ordered` breaks no tie they leave open), so
    # a page needs no deeper pool than itself and EXACT_LOOKAHEAD more.
    exact_order = False
    relevance_source: RelevanceSource | None = None  # None: no query, no relevance

    def __init__(self, store: Store, feedback: bool = False) -> None:
        self.store = store
        self.feedback = feedback
        self._expanded: tuple[str, Encoded] | None = None  # per filter
        # Of the last call to `candidates`; None: no query, nothing is a match or not.
        self.strong: StrongMatches | None = None

    def ordered(self, hits: list[Hit]) -> list[Hit]:
        """Best first, equal scores by point id: fusion ties come back in varying order, and
        pages must neither repeat nor skip a result."""
        return sorted(hits, key=lambda hit: (-hit.score, hit.id))

    def relevance(self, score: float, best: float) -> float:
        """A hit's relevance in [0, 1] from its score and the best score of the search (asked
        only of an algorithm with a `relevance_source`)."""
        return 1.0

    def candidates(
        self,
        *,
        query: Encoded,
        where: Selector,
        depth: int,
        score_threshold: float | None,
        payload_keys: Sequence[str],
    ) -> list[Hit]:
        if self.feedback:
            query = self._with_feedback(query, where)
        return self._candidates(query, Wanted(where, depth, score_threshold, payload_keys))

    @abstractmethod
    def _candidates(self, query: Encoded, wanted: "Wanted") -> list[Hit]: ...

    def _with_feedback(self, query: Encoded, where: Selector) -> Encoded:
        """The query expanded from its first results under `where` (kept for the next depth)."""
        key = where.model_dump_json()
        if self._expanded is not None and self._expanded[0] == key:
            return self._expanded[1]
        first = self._candidates(query, Wanted(where, feedback.FEEDBACK_DEPTH))
        top = [hit.id for hit in self.ordered(first)[: feedback.FEEDBACK_CHUNKS]]
        expanded = replace(query)
        if top and query.dense is not None:
            vectors = self.store.dense_vectors(top)
            expanded.dense = feedback.rocchio(
                query.dense, [vectors[i] for i in top if i in vectors]
            )
        if top and query.has_terms and query.sparse is not None:
            stored = self.store.retrieve(top, [fields.TITLE, fields.TEXT])
            texts = [fields.chunk_text(hit.payload) for hit in stored]
            expanded.sparse = feedback.rm3(query.sparse, texts)
        self._expanded = (key, expanded)
        return expanded


class Semantic(SearchAlgorithm):
    needs_dense = True
    relevance_source = RelevanceSource.COSINE

    def relevance(self, score: float, best: float) -> float:
        return min(1.0, max(0.0, score))

    def _candidates(self, query: Encoded, wanted: "Wanted") -> list[Hit]:
        nearest = models.NearestQuery(nearest=query.dense or [])
        hits = self.store.query(wanted.query(nearest, DENSE_VECTOR))
        self.strong = strong_in(hits, STRONG_COSINE, wanted.depth)
        return hits


class Bm25(SearchAlgorithm):
    """BM25 scores have no fixed scale: relevance is the score over the search's best score."""

    needs_sparse = True
    relevance_source = RelevanceSource.BM25

    def relevance(self, score: float, best: float) -> float:
        return min(1.0, score / best) if best > 0 else 0.0

    def _candidates(self, query: Encoded, wanted: "Wanted") -> list[Hit]:
        if not query.has_terms or query.sparse is None:
            self.strong = StrongMatches(set(), complete=True)
            return []  # only stopwords: no term can match
        nearest = models.NearestQuery(nearest=query.sparse)
        hits = self.store.query(wanted.query(nearest, SPARSE_VECTOR))
        self.strong = strong_in(hits, bm25_floor(hits), wanted.depth)
        return hits


class Hybrid(SearchAlgorithm):
    """Dense and sparse branches, each with the full filter, fused here (app.search.fusion):
    RRF (explicit k), DBSF or a convex combination, weighted by `dense_weight`."""

    needs_dense = True
    needs_sparse = True
    relevance_source = RelevanceSource.FUSION

    def __init__(
        self,
        store: Store,
        fusion: FusionMethod,
        rrf_k: int,
        dense_weight: float | None = None,
        feedback: bool = False,
    ) -> None:
        super().__init__(store, feedback)
        self.fusion = Fusion(fusion, rrf_k)
        weight = DEFAULT_DENSE_WEIGHT[fusion] if dense_weight is None else dense_weight
        self.weights = branch_weights(fusion, weight)
        self._best_possible = 1.0

    def relevance(self, score: float, best: float) -> float:
        return min(1.0, max(0.0, score / self._best_possible))

    def _candidates(self, query: Encoded, wanted: "Wanted") -> list[Hit]:
        dense_weight, sparse_weight = self.weights
        dense = dense_weight > 0 or not query.has_terms
        sparse = query.sparse if sparse_weight > 0 and query.has_terms else None
        branch = replace(wanted, score_threshold=None, payload_keys=NO_PAYLOAD)
        asked = []
        if dense:
            nearest = models.NearestQuery(nearest=query.dense or [])
            asked.append(branch.query(nearest, DENSE_VECTOR))
        if sparse is not None:
            asked.append(branch.query(models.NearestQuery(nearest=sparse), SPARSE_VECTOR))
        answers = iter(self.store.query_batch(asked))  # both branches in one engine call
        branches = []
        strong = []
        if dense:
            hits = next(answers)
            branches.append(Branch(hits, dense_weight or 1.0, cosine=True))
            strong.append(strong_in(hits, STRONG_COSINE, wanted.depth))
        if sparse is not None:
            hits = next(answers)
            branches.append(Branch(hits, sparse_weight))
            strong.append(strong_in(hits, bm25_floor(hits), wanted.depth))
        self._best_possible = self.fusion.best_possible(branches)
        self.strong = StrongMatches(
            set().union(*(branch.ids for branch in strong)),
            all(branch.complete for branch in strong),
        )
        # The best `depth`, and the strong matches fused below them (in order still), so
        # that every strong match read is counted.
        every = self.ordered(self.fusion.fuse(branches))
        depth = wanted.depth
        fused = every[:depth] + [hit for hit in every[depth:] if hit.id in self.strong.ids]
        if wanted.score_threshold is not None:
            fused = [hit for hit in fused if hit.score >= wanted.score_threshold]
        if not wanted.payload_keys or not fused:
            return fused
        keys = wanted.payload_keys
        stored = {h.id: h.payload for h in self.store.retrieve([h.id for h in fused], keys)}
        return [Hit(h.id, h.score, stored[h.id]) for h in fused if h.id in stored]


class Browse(SearchAlgorithm):
    """No query text: newest (or oldest) matching documents first (one hit a document: its
    first chunk), equal dates by point id. The engine orders by date only and cuts a run of
    equal dates anywhere, so the run at the edge of what it returns is read whole (up to
    MAX_TIED): the order is exact, and a page needs only itself and a few more
    (`exact_order`); reading 100 candidates instead of 20 cost 1.3 against 0.25 ms at 100k."""

    per_document = True
    exact_order = True

    def __init__(self, store: Store, oldest: bool = False) -> None:
        super().__init__(store)
        self.oldest = oldest

    def ordered(self, hits: list[Hit]) -> list[Hit]:
        sign = 1 if self.oldest else -1
        return sorted(hits, key=lambda hit: (sign * int(hit.payload[fields.MODIFIED_AT]), hit.id))

    def _candidates(self, query: Encoded, wanted: "Wanted") -> list[Hit]:
        hits = self._by_date(wanted)
        if len(hits) < wanted.depth:  # every match
            return hits
        edge = hits[-1].payload[fields.MODIFIED_AT]
        tied = self._by_date(replace(wanted, where=modified_at(wanted.where, edge), depth=MAX_TIED))
        return [hit for hit in hits if hit.payload[fields.MODIFIED_AT] != edge] + tied

    def _by_date(self, wanted: "Wanted") -> list[Hit]:
        direction = models.Direction.ASC if self.oldest else models.Direction.DESC
        order = models.OrderByQuery(
            order_by=models.OrderBy(key=fields.MODIFIED_AT, direction=direction)
        )
        return self.store.query(replace(wanted, score_threshold=None).query(order))
