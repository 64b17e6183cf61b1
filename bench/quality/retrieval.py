"""Retrieval quality through HTTP: every algorithm x fusion x feedback on Vaswani (and on a
collection of longer documents made of its abstracts), nDCG@10 and recall@100 with each
document counted once, the tuned settings cross-validated, and latency beside each; then the
default dense weight of each fusion, chosen on both collections (bench.quality.choice).

    .venv/bin/python -m bench.quality.retrieval [--collections vaswani,long] [--k-grid 60]
        [--no-feedback] [--smoke]

Per collection the real service runs once per RRF k (SEARCH_RRF_K; by default only 60, its
default); every variant is asked every query at every dense_weight of its grid. Tuning is 5-fold
cross-validation: the setting that scores best on four folds is scored on the fifth, and the
number reported is the mean of the five held-out scores (never a tuned-on score). Results:
bench/results/quality.json, a table and a plot in docs/benchmarks.md (between the quality
markers), and, when both collections ran, the defaults the service ships
(app/search/fusion_defaults.json)."""

import argparse
import json
import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from app.search.fusion import FusionMethod
from app.search.fusion_defaults import DEFAULT_DENSE_WEIGHT, DEFAULTS_FILE
from bench.harness import results
from bench.harness.corpus import DATASET, load_vaswani, long_documents
from bench.harness.prepare import TIERS, Tier, model_encoder, prepare, tier_dir
from bench.harness.service import QUALITY_KEY, Scores, ask, running_service
from bench.quality.choice import Grid, defaults_record, write_defaults

RESULTS = results.RESULTS / "quality.json"
DEFAULT_K = 60  # SEARCH_RRF_K's default
COLLECTIONS = ("vaswani", "long")
WEIGHTS = tuple(round(w / 10, 1) for w in range(11))
FOLDS, FOLD_SEED = 5, 17


@dataclass(frozen=True)
class Variant:
    name: str
    body: dict[str, Any]
    weights: tuple[float, ...] = ()  # dense_weight grid; () = not a hybrid
    default_weight: float | None = None

    def settings(self, k: int) -> list[tuple[str, dict[str, Any]]]:
        """(setting label, request fields) for each point of the grid at this k."""
        if not self.weights:
            return [("", self.body)]
        rrf = self.body.get("fusion") == "rrf"
        label = f"k={k} " if rrf else ""
        return [(f"{label}w={w}", self.body | {"dense_weight": w}) for w in self.weights]

    def default_label(self) -> str:
        if not self.weights:
            return ""
        label = f"k={DEFAULT_K} " if self.body.get("fusion") == "rrf" else ""
        return f"{label}w={self.default_weight}"


def variants(weights: tuple[float, ...], feedback: bool = True) -> list[Variant]:
    plain = [
        Variant("bm25", {"algorithm": "bm25"}),
        Variant("semantic", {"algorithm": "semantic"}),
        *(
            Variant(f"hybrid {method}", {"fusion": str(method)}, weights, weight)
            for method, weight in DEFAULT_DENSE_WEIGHT.items()
        ),
    ]
    with_feedback = [
        Variant(f"{v.name} + feedback", v.body | {"feedback": True}, v.weights, v.default_weight)
        for v in plain
    ]
    return plain + with_feedback if feedback else plain


def measure(
    data_dir: Path, queries: dict[str, str], qrels: dict[str, set[str]], args: argparse.Namespace
) -> dict[str, dict[str, Scores]]:
    """Per variant, per setting: the per-query scores."""
    measured: dict[str, dict[str, Scores]] = {}
    for k in args.k_grid:
        with running_service(data_dir, settings={"SEARCH_RRF_K": str(k)}) as svc:
            headers = {"Authorization": f"Bearer {QUALITY_KEY}"}
            with httpx.Client(headers=headers, timeout=120) as client:
                for text in list(queries.values())[:5]:  # warm-up
                    client.post(f"{svc.base}/api/v1/search", json={"query": text})
                for variant in variants(args.weights, args.feedback):
                    rrf = variant.body.get("fusion") == "rrf"
                    if not rrf and k != args.k_grid[0]:
                        continue  # k is RRF's only
                    for label, body in variant.settings(k):
                        got = ask(client, svc.base, queries, qrels, body)
                        measured.setdefault(variant.name, {})[label] = got
                    print(json.dumps({"k": k, "variant": variant.name}), flush=True)
    return measured


def folds(count: int) -> list[list[int]]:
    order = list(range(count))
    random.Random(FOLD_SEED).shuffle(order)
    return [order[f::FOLDS] for f in range(FOLDS)]


def cross_validated(grid: dict[str, Scores]) -> dict[str, Any]:
    """The mean held-out nDCG@10 and recall@100, and the setting each fold chose."""
    count = len(next(iter(grid.values())).ndcg)
    held_ndcg, held_recall, chosen = [], [], []
    for test in folds(count):
        train = [i for i in range(count) if i not in set(test)]
        best = max(grid, key=lambda s: (statistics.fmean(grid[s].ndcg[i] for i in train), s))
        chosen.append(best)
        held_ndcg.append(statistics.fmean(grid[best].ndcg[i] for i in test))
        held_recall.append(statistics.fmean(grid[best].recall[i] for i in test))
    return {
        "ndcg@10": round(statistics.fmean(held_ndcg), 4),
        "recall@100": round(statistics.fmean(held_recall), 4),
        "chosen": chosen,
    }


def summarise(measured: dict[str, dict[str, Scores]], weights: tuple[float, ...]) -> dict[str, Any]:
    rows = {}
    for variant in variants(weights):
        grid = measured.get(variant.name)
        if not grid:
            continue
        default = grid.get(variant.default_label()) or next(iter(grid.values()))
        rows[variant.name] = {
            "default": variant.default_label(),
            "ndcg@10": round(statistics.fmean(default.ndcg), 4),
            "recall@100": round(statistics.fmean(default.recall), 4),
            "p50_ms": round(statistics.median(default.wall_ms), 1),
            "cv": cross_validated(grid) if len(grid) > 1 else None,
            "grid": {label: round(statistics.fmean(s.ndcg), 4) for label, s in grid.items()},
        }
    return rows


def default_weight_grids(
    measured: dict[str, dict[str, dict[str, Scores]]],
    asked: dict[str, list[str]],
    weights: tuple[float, ...],
) -> dict[FusionMethod, Grid]:
    """Per fusion (without feedback, RRF at its default k): collection -> dense_weight -> query
    id -> nDCG@10."""
    grids: dict[FusionMethod, Grid] = {}
    for variant in variants(weights):
        fusion = variant.body.get("fusion")
        if fusion is None or "feedback" in variant.body:
            continue
        grids[FusionMethod(fusion)] = {
            name: {
                body["dense_weight"]: dict(
                    zip(asked[name], measured[name][variant.name][label].ndcg, strict=True)
                )
                for label, body in variant.settings(DEFAULT_K)
            }
            for name in measured
        }
    return grids


def collection(
    name: str, args: argparse.Namespace
) -> tuple[Path, dict[str, str], dict[str, set[str]]]:
    docs, queries, qrels = load_vaswani(args.dataset)
    tier = TIERS["smoke"] if args.smoke else TIERS["11k"]
    if name == "long":
        docs, qrels = long_documents(docs, qrels)
        tier = Tier("long-smoke", 0, real_docs=60) if args.smoke else Tier("long", 0)
    encoder = model_encoder(args.data / "cache", hashing=args.smoke)
    prepare(args.data, tier, docs, encoder)
    indexed = set(list(docs)[: tier.real_docs]) if tier.real_docs else set(docs)
    judged = {q: queries[q] for q in sorted(queries) if q in qrels and qrels[q] & indexed}
    judged = dict(list(judged.items())[: args.queries])
    return tier_dir(args.data, tier.name) / "data", judged, qrels


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.quality.retrieval")
    parser.add_argument("--collections", default="vaswani,long")
    parser.add_argument("--queries", type=int, default=93)
    parser.add_argument("--data", type=Path, default=results.DATA)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument(
        "--no-feedback",
        dest="feedback",
        action="store_false",
        help="leave out the variants with query feedback (the defaults do not need them)",
    )
    parser.add_argument("--k-grid", default=str(DEFAULT_K), help="RRF k values, e.g. 20,40,60,100")
    parser.add_argument(
        "--defaults",
        type=Path,
        default=None,
        help=f"where the chosen defaults go (default: {DEFAULTS_FILE}, not with --smoke)",
    )
    parser.add_argument("--no-report", action="store_true", help="leave docs/ as they are")
    parser.add_argument("--smoke", action="store_true", help="CI: tiny corpus, hashing vectors")
    args = parser.parse_args(argv)
    args.k_grid = tuple(int(k) for k in args.k_grid.split(","))
    args.weights = WEIGHTS
    if args.smoke:
        args.queries, args.k_grid, args.weights = 5, (DEFAULT_K,), (0.4, 0.7)
    elif args.defaults is None:
        args.defaults = DEFAULTS_FILE
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    result: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    measured, asked = {}, {}
    for name in args.collections.split(","):
        data_dir, queries, qrels = collection(name, args)
        before = results.load_average_text()
        measured[name] = measure(data_dir, queries, qrels, args)
        asked[name] = list(queries)
        result[name] = {
            "queries": len(queries),
            "load_average": f"{before} -> {results.load_average_text()}",
            "variants": summarise(measured[name], args.weights),
        }
    if args.defaults is not None and DEFAULT_K in args.k_grid and set(measured) >= {*COLLECTIONS}:
        grids = default_weight_grids(measured, asked, args.weights)
        result["defaults"] = defaults_record(grids, DEFAULT_K)
        write_defaults(args.defaults, result["defaults"])
        print(f"wrote {args.defaults}")
    results.write_results(args.out, result)
    print(f"wrote {args.out}")
    if not args.no_report:
        from bench.quality.report import render

        render(result)


if __name__ == "__main__":
    main()
