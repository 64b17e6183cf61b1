"""Pseudo-relevance feedback: the query moved toward its own best results before the search runs
again (one more engine round per branch). Dense: Rocchio, the query vector plus the mean of the
feedback chunks' vectors. Sparse: RM3, the query's terms mixed with the terms the feedback chunks
use most (each chunk's term frequencies over its length, averaged); the engine applies IDF to
every term, so common ones weigh little.

The feedback chunks are the first results of the same search, under the same filter and the
same access rule: a query is only ever expanded with text the user may read. Settings measured
in docs/benchmarks.md ("Retrieval quality")."""

import math
from collections.abc import Sequence

from qdrant_client.http import models

from app.embeddings.sparse import term_counts

FEEDBACK_CHUNKS = 3  # the first results that feed back
FEEDBACK_DEPTH = 20  # candidates per branch the first round asks for (it needs the top 3)
ROCCHIO_BETA = 1.0
EXPANSION_TERMS = 30
EXPANSION_WEIGHT = 0.3  # the expansion's share of the sparse query


def rocchio(query: Sequence[float], vectors: Sequence[Sequence[float]]) -> list[float]:
    """The query plus ROCCHIO_BETA times the mean of `vectors`, unit length again."""
    if not vectors:
        return list(query)
    moved = [
        q + ROCCHIO_BETA * sum(column) / len(vectors)
        for q, column in zip(query, zip(*vectors, strict=True), strict=True)
    ]
    norm = math.sqrt(sum(x * x for x in moved)) or 1.0
    return [x / norm for x in moved]


def rm3(query: models.SparseVector, texts: Sequence[str]) -> models.SparseVector:
    """(1 - EXPANSION_WEIGHT) of the query's term weights and EXPANSION_WEIGHT of the
    EXPANSION_TERMS terms most frequent in `texts`, each part summing to 1."""
    expansion: dict[int, float] = {}
    for text in texts:
        counts = term_counts(text)
        length = sum(counts.values)
        for term, count in zip(counts.indices, counts.values, strict=True):
            expansion[term] = expansion.get(term, 0.0) + count / length / len(texts)
    if not expansion or not query.indices:
        return query
    kept = sorted(expansion.items(), key=lambda item: (-item[1], item[0]))[:EXPANSION_TERMS]
    kept_total = sum(weight for _, weight in kept)
    query_total = sum(query.values)
    weights = {
        term: (1 - EXPANSION_WEIGHT) * value / query_total
        for term, value in zip(query.indices, query.values, strict=True)
    }
    for term, weight in kept:
        weights[term] = weights.get(term, 0.0) + EXPANSION_WEIGHT * weight / kept_total
    ordered = sorted(weights.items())
    return models.SparseVector(
        indices=[term for term, _ in ordered], values=[weight for _, weight in ordered]
    )
