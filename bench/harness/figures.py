"""The figures the benchmarks take: how long a call took, percentiles of many, nDCG@10 and
recall against the right answer (an exact scan where the engine's is approximate), and the size
of a directory on disk."""

import math
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

T = TypeVar("T")


def timed(run: Callable[[], T]) -> tuple[float, T]:
    """Seconds `run` took, and what it answered."""
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result


def timed_ms(run: Callable[[], T]) -> tuple[float, T]:
    """Milliseconds `run` took, and what it answered."""
    seconds, result = timed(run)
    return seconds * 1000, result


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {"p50": round(statistics.median(ordered), 2), "p95": at(0.95), "p99": at(0.99)}


def ndcg_at_10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return dcg / ideal if ideal else 0.0


def exact_dense(vectors: np.ndarray, mask: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
    """The rows of the `k` vectors nearest `query` (dot product) among those `mask` keeps."""
    rows = np.flatnonzero(mask)
    scores = vectors[rows] @ query
    return np.asarray(rows[np.argsort(-scores, kind="stable")[:k]])


def recall(found: list[str], exact: set[str]) -> float:
    return len(exact & set(found)) / len(exact) if exact else 1.0


def disk_mib(path: Path) -> float:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return round(total / 2**20, 1)
