"""The search algorithms. Each one asks the engine for the best `depth` chunks under the search
filter (`app.filters.conditions`), applied inside the engine on every branch before fusion."""

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from qdrant_client import models

from app.embeddings.dense import DenseEncoder
from app.embeddings.sparse import Bm25Encoder
from app.filters.selectors import Selector
from app.store import fields
from app.store.base import Hit, Store
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR

# What ranking, grouping and verify read from a candidate; the rest of the payload (the text
# above all) is read for the page shown only.
CANDIDATE_KEYS = (fields.DOC_TYPE, fields.DOC_ID, fields.MODIFIED_AT)
NO_PAYLOAD: tuple[str, ...] = ()


class Algorithm(StrEnum):
    HYBRID = "hybrid"
    SEMANTIC = "semantic"
    BM25 = "bm25"


class FusionMethod(StrEnum):
    RRF = "rrf"
    DBSF = "dbsf"


@dataclass
class Encoded:
    """The query as vectors, with the time it took to encode it."""

    dense: list[float] | None = None
    sparse: models.SparseVector | None = None
    seconds: float = 0.0


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
    its hits carry `payload_keys` (CANDIDATE_KEYS, or NO_PAYLOAD where nothing reads them)."""

    needs_dense = False
    needs_sparse = False
    per_document = False  # True: candidates are first chunks only, one per document

    def __init__(self, store: Store) -> None:
        self.store = store

    def ordered(self, hits: list[Hit]) -> list[Hit]:
        """Best first, equal scores by point id: fusion ties come back in varying order, and
        pages must neither repeat nor skip a result."""
        return sorted(hits, key=lambda hit: (-hit.score, hit.id))

    @abstractmethod
    def candidates(
        self,
        *,
        query: Encoded,
        where: Selector,
        depth: int,
        score_threshold: float | None,
        payload_keys: Sequence[str],
    ) -> list[Hit]: ...


class Semantic(SearchAlgorithm):
    needs_dense = True

    def candidates(
        self,
        *,
        query: Encoded,
        where: Selector,
        depth: int,
        score_threshold: float | None,
        payload_keys: Sequence[str],
    ) -> list[Hit]:
        return self.store.query(
            query=models.NearestQuery(nearest=query.dense or []),
            using=DENSE_VECTOR,
            filter=where,
            limit=depth,
            score_threshold=score_threshold,
            payload_keys=payload_keys,
        )


class Bm25(SearchAlgorithm):
    needs_sparse = True

    def candidates(
        self,
        *,
        query: Encoded,
        where: Selector,
        depth: int,
        score_threshold: float | None,
        payload_keys: Sequence[str],
    ) -> list[Hit]:
        if query.sparse is None or not query.sparse.indices:
            return []  # only stopwords: no term can match
        return self.store.query(
            query=models.NearestQuery(nearest=query.sparse),
            using=SPARSE_VECTOR,
            filter=where,
            limit=depth,
            score_threshold=score_threshold,
            payload_keys=payload_keys,
        )


class Hybrid(SearchAlgorithm):
    """Dense and sparse branches, each with the full filter, fused by RRF (explicit k) or DBSF."""

    needs_dense = True
    needs_sparse = True

    def __init__(self, store: Store, fusion: FusionMethod, rrf_k: int) -> None:
        super().__init__(store)
        self.fusion = fusion
        self.rrf_k = rrf_k

    def candidates(
        self,
        *,
        query: Encoded,
        where: Selector,
        depth: int,
        score_threshold: float | None,
        payload_keys: Sequence[str],
    ) -> list[Hit]:
        branches = [
            models.Prefetch(
                query=models.NearestQuery(nearest=query.dense or []),
                using=DENSE_VECTOR,
                filter=where,
                limit=depth,
            )
        ]
        if query.sparse is not None and query.sparse.indices:
            branches.append(
                models.Prefetch(
                    query=models.NearestQuery(nearest=query.sparse),
                    using=SPARSE_VECTOR,
                    filter=where,
                    limit=depth,
                )
            )
        fusion: models.Query = (
            models.RrfQuery(rrf=models.Rrf(k=self.rrf_k))
            if self.fusion is FusionMethod.RRF
            else models.FusionQuery(fusion=models.Fusion.DBSF)
        )
        return self.store.query(
            query=fusion,
            prefetch=branches,
            filter=where,
            limit=depth,
            score_threshold=score_threshold,
            payload_keys=payload_keys,
        )


class Browse(SearchAlgorithm):
    """No query text: newest matching documents first (one hit a document: its first chunk)."""

    per_document = True

    def ordered(self, hits: list[Hit]) -> list[Hit]:
        return sorted(hits, key=lambda hit: (-int(hit.payload[fields.MODIFIED_AT]), hit.id))

    def candidates(
        self,
        *,
        query: Encoded,
        where: Selector,
        depth: int,
        score_threshold: float | None,
        payload_keys: Sequence[str],
    ) -> list[Hit]:
        return self.store.query(
            query=models.OrderByQuery(
                order_by=models.OrderBy(key=fields.MODIFIED_AT, direction=models.Direction.DESC)
            ),
            filter=where,
            limit=depth,
            payload_keys=payload_keys,
        )
