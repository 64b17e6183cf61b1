"""The default dense weight of each fusion, chosen from the quality bench's grids on both
collections at once and written to the file the service reads its defaults from
(`app/search/fusion_defaults.json`, `app.search.fusion_defaults`).

The weight shipped is the one with the best mean nDCG@10 over the collections (each
collection's mean over its queries, the collections weighing alike) on every query. Its held-out
figure is 5-fold cross-validation of that same rule: on each fold the weight best on the other
four folds of both collections, scored on the fold in each collection; the mean of the five
fold scores per collection (never a tuned-on score). Folds are drawn over query ids: the
collections ask the same queries, so a fold holds a query out of both."""

import json
import random
import statistics
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.search.fusion import FusionMethod
from app.search.fusion_defaults import current_fingerprint

FOLDS, FOLD_SEED = 5, 17
RULE = (
    "bench.quality.retrieval: per fusion, the dense_weight of its grid with the best mean"
    " nDCG@10 over the collections {collections} (RRF k {k}); held-out: 5-fold cross-validation"
    " of that rule, the folds holding queries out of every collection"
)

# collection -> dense_weight -> query id -> nDCG@10
Grid = Mapping[str, Mapping[float, Mapping[str, float]]]


def _folds(queries: list[str]) -> list[set[str]]:
    order = sorted(queries)
    random.Random(FOLD_SEED).shuffle(order)
    return [set(order[f::FOLDS]) for f in range(FOLDS)]


def _mean(scores: Mapping[str, float], queries: set[str]) -> float:
    """Over the queries of `queries` the collection asked (a smoke run's differ)."""
    return statistics.fmean(score for q, score in scores.items() if q in queries)


def _asked(by_weight: Mapping[float, Mapping[str, float]]) -> set[str]:
    return set(next(iter(by_weight.values())))


def best_weight(grid: Grid, queries: set[str]) -> float:
    """The weight with the best mean over the collections on `queries` (ties: the lower)."""
    weights = sorted(next(iter(grid.values())))
    judged = [c for c in grid if _asked(grid[c]) & queries]
    return max(
        weights,
        key=lambda w: (statistics.fmean(_mean(grid[c][w], queries) for c in judged), -w),
    )


def chosen(grid: Grid) -> dict[str, Any]:
    """The weight for every query, its nDCG@10 there, and the rule's held-out nDCG@10."""
    asked = {name: _asked(by_weight) for name, by_weight in grid.items()}
    every = set().union(*asked.values())
    held: dict[str, list[float]] = {c: [] for c in grid}
    folds_chose = []
    for test in _folds(list(every)):
        weight = best_weight(grid, every - test)
        folds_chose.append(weight)
        for name in grid:
            if asked[name] & test:
                held[name].append(_mean(grid[name][weight], test))
    weight = best_weight(grid, every)
    return {
        "dense_weight": weight,
        "ndcg@10": {c: round(_mean(grid[c][weight], every), 4) for c in grid},
        "held_out_ndcg@10": {c: round(statistics.fmean(v), 4) for c, v in held.items()},
        "folds_chose": folds_chose,
    }


def defaults_record(grids: Mapping[FusionMethod, Grid], rrf_k: int) -> dict[str, Any]:
    collections = sorted(next(iter(grids.values())))
    return {
        "chosen_by": RULE.format(collections=" and ".join(collections), k=rrf_k),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "fingerprint": current_fingerprint(),
        "fusions": {str(method): chosen(grid) for method, grid in grids.items()},
    }


def write_defaults(path: Path, record: dict[str, Any]) -> None:
    path.write_text(json.dumps(record, indent=2) + "\n")
