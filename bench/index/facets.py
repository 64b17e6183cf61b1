"""Facets, before / after: what a faceted search pays beyond the search itself (the five chips and
the document count) when the filter is new or a write came since the last search, which under
continuous ingest is every search.

Two copies of one embedded index are opened in one process: A counts through the engine
(`facet_index=False`, the memo of counts and facets forgotten on every write), B from the
in-memory facet index. Before every repetition the same write goes to both (a document written
again), then A and B answer the same filters, in alternating order; both answers are compared.

    python -m bench.index.facets --source /work/bench-data/ref/100k-optimized [--repeat 15]

The source directory is copied (never opened in place); the copies are deleted afterwards."""

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from app.auth import Principal
from app.filters.conditions import FACET_KEYS, SearchFilter, search_filter
from app.filters.selectors import documents
from app.filters.spec import FilterSpec
from app.search.service import FACET_LIMIT
from app.store.edge import EdgeStore
from bench.harness.corpus import BENCH_GROUP, BENCH_USER, FIRST_DAY, SPAN, YEAR
from bench.harness.prepare import COLLECTION


def scenarios() -> dict[str, FilterSpec]:
    return {
        "access rule only": FilterSpec(),
        "~50 % (date)": FilterSpec(modified_after=FIRST_DAY + SPAN // 2),
        "~5 % (category)": FilterSpec(categories=("cat03",)),
        "one folder": FilterSpec(path_prefixes=("/team07/project11",)),
        "tags_all + dates": FilterSpec(
            tags_all=("tag01", "tag02"),
            modified_after=FIRST_DAY,
            modified_before=FIRST_DAY + 3 * YEAR,
        ),
    }


def chips(store: EdgeStore, visible: SearchFilter) -> tuple[dict[str, dict[str, int]], int]:
    """What SearchService asks for a faceted browse page: five facets and the document count."""
    facets = {
        facet.value: store.facet(
            key, visible.selector(first_chunk=True, without=facet), FACET_LIMIT
        )
        for facet, key in FACET_KEYS.items()
    }
    return facets, store.count(visible.selector(first_chunk=True))


def timed(store: EdgeStore, visible: SearchFilter) -> tuple[float, object]:
    started = time.perf_counter()
    answer = chips(store, visible)
    return (time.perf_counter() - started) * 1000, answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, required=True, help="an embedded data directory")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-facets-") as scratch:
        copies = [Path(scratch) / name for name in ("engine", "memory")]
        for copy in copies:
            shutil.copytree(args.source, copy)
        started = time.perf_counter()
        engine = EdgeStore(copies[0], COLLECTION, facet_index=False)
        memory = EdgeStore(copies[1], COLLECTION)
        memory.wait_for_facet_index()
        print(f"facet index loaded in {time.perf_counter() - started:.1f} s (open included)")
        try:
            run(engine, memory, args.repeat)
        finally:
            engine.close()
            memory.close()


def run(engine: EdgeStore, memory: EdgeStore, repeat: int) -> None:
    principal = Principal(user=BENCH_USER, groups=(BENCH_GROUP,))
    rewritten = engine.scroll(documents(), 1)[0].id
    points = engine.scroll_points(rewritten, 1)[0]
    print(f"{'filter':<20} {'engine p50':>11} {'memory p50':>11} {'ratio':>7}  (ms, cold)")
    for name, spec in scenarios().items():
        visible = search_filter(principal, spec)
        times: dict[str, list[float]] = {"engine": [], "memory": []}
        for n in range(repeat):
            for store in (engine, memory):
                store.upsert(points)  # a write: nothing kept from before it may be used
            order = [("engine", engine), ("memory", memory)]
            answers = {}
            for label, store in order if n % 2 else order[::-1]:
                ms, answers[label] = timed(store, visible)
                times[label].append(ms)
            if answers["engine"] != answers["memory"]:
                raise SystemExit(f"{name}: the two answers differ")
        a, b = (statistics.median(times[label]) for label in ("engine", "memory"))
        print(f"{name:<20} {a:>11.1f} {b:>11.1f} {a / b:>6.1f}x")


if __name__ == "__main__":
    main()
