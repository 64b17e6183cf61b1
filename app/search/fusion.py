"""Hybrid fusion, in the service: each branch's ranked hits (best first) combined into one
ranking, every fused score paired with a relevance in [0, 1] where a hit that every branch ranks
first scores 1.

- RRF: sum of w / (k + rank) (rank from 0, as Qdrant counts it); relevance: that over its
  largest possible value, sum of w / k. Weights are 2 x dense_weight and 2 x (1 - dense_weight),
  so a weight of 0.5 gives Qdrant's unweighted scores.
- DBSF: each branch's scores mapped linearly from mean -+ 3 standard deviations to 0 and 1,
  weighted as RRF; relevance: the sum over that of a hit first in every branch.
- Convex: dense_weight x cosine and (1 - dense_weight) x BM25, each scaled by the branch's best
  score from its theoretical floor (-1 for a cosine, 0 for BM25); the score is the relevance.

Why the service fuses and not the engine: the relevance needs each branch's ranks or scores,
which an engine-side fusion hides, and the same code then runs on both engines.

The dense weight each fusion takes by default is not written here: the quality bench chooses it
by 5-fold cross-validation on both of its collections and writes it with its held-out nDCG@10
to `fusion_defaults.json` (`app.search.fusion_defaults` reads it once, at import). Re-run it
after any change to BM25 or to this module (`python -m bench.quality.retrieval`, docs/
benchmarks.md, "Retrieval quality"); a test fails until then. RRF's k is `SEARCH_RRF_K`."""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from app.store.base import Hit


class FusionMethod(StrEnum):
    RRF = "rrf"
    DBSF = "dbsf"
    CONVEX = "convex"


@dataclass(frozen=True)
class Branch:
    """One branch's hits, best first, and its weight; `cosine`: its scores are cosines."""

    hits: list[Hit]
    weight: float
    cosine: bool = False


@dataclass(frozen=True)
class Fusion:
    method: FusionMethod
    rrf_k: int

    def fuse(self, branches: Sequence[Branch]) -> list[Hit]:
        """Every hit of any branch with its fused score, unordered."""
        scores: dict[str, float] = {}
        for branch in branches:
            for hit, value in zip(branch.hits, self._scaled(branch), strict=True):
                scores[hit.id] = scores.get(hit.id, 0.0) + value
        return [Hit(id_, score, {}) for id_, score in scores.items()]

    def best_possible(self, branches: Sequence[Branch]) -> float:
        """The fused score of a hit every branch that found anything ranks first."""
        return sum(self._scaled(branch)[0] for branch in branches if branch.hits) or 1.0

    def _scaled(self, branch: Branch) -> list[float]:
        scores = [hit.score for hit in branch.hits]
        if not scores:
            return []
        if self.method is FusionMethod.RRF:
            return [branch.weight / (self.rrf_k + rank) for rank in range(len(scores))]
        if self.method is FusionMethod.DBSF:
            return [branch.weight * value for value in _distribution_scaled(scores)]
        floor = -1.0 if branch.cosine else 0.0
        span = max(scores[0] - floor, 1e-12)
        return [branch.weight * max(0.0, value - floor) / span for value in scores]


def _distribution_scaled(scores: list[float]) -> list[float]:
    """Mean - 3 standard deviations -> 0, mean + 3 -> 1, linearly and unclipped: a clipped top
    would tie the few scores far above the rest (BM25's best often are)."""
    mean = statistics.fmean(scores)
    spread = 6 * statistics.pstdev(scores) if len(scores) > 1 else 0.0
    if spread <= 0:
        return [1.0] * len(scores)
    low = mean - spread / 2
    return [(value - low) / spread for value in scores]


def branch_weights(method: FusionMethod, dense_weight: float) -> tuple[float, float]:
    """The dense and the sparse branch's weights."""
    scale = 1.0 if method is FusionMethod.CONVEX else 2.0
    return scale * dense_weight, scale * (1.0 - dense_weight)
