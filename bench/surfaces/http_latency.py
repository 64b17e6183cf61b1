"""Cold start and search latency over HTTP on the demo corpus.

Starts `astrolabe-search serve` on a data directory holding the demo corpus (loads it first if
needed), times the start until /readyz answers 200, then runs each scenario's queries several
times and reports medians, with ratios against the unfiltered hybrid baseline of the same run.

    .venv/bin/python -m bench.surfaces.http_latency [--data-dir DIR] [--rounds 5]
"""

import argparse
import json
import statistics
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx

from app.filters.spec import parse_modified_timestamp
from app.ingest.demo import DEMO_CORPUS
from bench.harness.service import demo_service

QUERIES = [
    "quarterly budget review",
    "kubernetes deployment rollback",
    "incident postmortem database outage",
    "tomato seedlings in spring",
    "observing jupiter with a telescope",
    "onboarding new engineers",
    "marketing campaign results",
    "travel itinerary for the conference",
    "security audit findings",
    "pasta recipe with garlic",
]


def scenarios() -> dict[str, dict[str, Any]]:
    """Unfiltered, a broad (~50 %) date filter, a selective (~1 %) folder filter."""
    docs = [json.loads(line) for line in DEMO_CORPUS.read_text().splitlines() if line.strip()]
    stamps = sorted(parse_modified_timestamp(d["modified_at"], "modified_at") or 0 for d in docs)
    median = stamps[len(stamps) // 2]
    folders: dict[str, int] = {}
    for d in docs:
        if d.get("file_path"):
            parts = d["file_path"].split("/")
            for depth in range(2, len(parts)):
                folder = "/".join(parts[:depth])
                folders[folder] = folders.get(folder, 0) + 1
    target = max(1, round(len(docs) * 0.01))
    selective = min(folders, key=lambda f: (abs(folders[f] - target), f))
    return {
        "unfiltered": {},
        "broad (~50 %)": {"modified_after": median},
        f"selective ({folders[selective]} docs)": {"path_prefixes": [selective]},
    }


def timed_search(client: httpx.Client, base: str, body: dict[str, Any]) -> float:
    started = time.perf_counter()
    response = client.post(f"{base}/api/v1/search", json=body)
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default="bench/.data/demo")
    parser.add_argument("--rounds", type=int, default=5)
    return parser.parse_args()


def demo(data_dir: str) -> AbstractContextManager[tuple[str, float]]:
    """`serve` over the demo data directory with the key `bench` (what the reports send)."""
    return demo_service(Path(data_dir), "bench", "search")


def main() -> None:
    args = parse_arguments()
    with demo(args.data_dir) as (base, cold_start):
        print(f"cold start to /readyz 200: {cold_start:.1f} s")
        report(base, args.rounds)


def report(base: str, rounds: int) -> None:
    headers = {"Authorization": "Bearer bench"}
    with httpx.Client(headers=headers, timeout=30) as client:
        for query in QUERIES:  # warm-up: caches, first-call costs
            timed_search(client, base, {"query": query})
        rows = []
        for name, filters in scenarios().items():
            for algorithm in ("hybrid", "semantic", "bm25"):
                samples = [
                    timed_search(client, base, {"query": q, "algorithm": algorithm, **filters})
                    for _ in range(rounds)
                    for q in QUERIES
                ]
                rows.append((name, algorithm, statistics.median(samples)))
    baseline = next(
        ms for name, algorithm, ms in rows if (name, algorithm) == ("unfiltered", "hybrid")
    )
    print("| filter | algorithm | median ms over HTTP | vs unfiltered hybrid |")
    print("|---|---|---|---|")
    for name, algorithm, ms in rows:
        print(f"| {name} | {algorithm} | {ms:.1f} | {ms / baseline:.2f}x |")


if __name__ == "__main__":
    main()
