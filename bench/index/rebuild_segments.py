"""How many segments a rebuild should keep (`REBUILD_SEGMENTS`): the shapes a burst of writes
leaves, searched through `serve`.

For each count, the tier's points are written through the store layer and, every
`SEARCH_HNSW_THRESHOLD` points, optimized as a rebuild optimizes its copy (every point indexed,
segments merged past the count); the last points stay outside the graph, as after the HTTP
load. Then `serve` (the local model) on that index: every scenario one after the other, and 16
clients for 15 s twice, with the CPU each process spent per search (the engine process serves
one call at a time, so its CPU per search bounds the throughput). The optimize seconds are the
rebuild work the count costs (in process: the service's rebuilds add the copy and the replay).

    .venv/bin/python -m bench.index.rebuild_segments --counts 8,6,5,4,2"""

import argparse
import json
import resource
import shutil
import time
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from app.config import Settings
from app.store.edge import EdgeStore
from bench.harness import service
from bench.harness.corpus import DATASET, judged_queries, load_vaswani
from bench.harness.prepare import COLLECTION, TIERS, model_encoder, prepare_files, upsert_file
from bench.harness.results import DATA, RESULTS, load_average, machine, write_results

CLIENTS = 16
WINDOW_S = 15.0


def build(out: Path, target: Path, segments: int, every: int) -> dict[str, Any]:
    """The tier's points into `target`, optimized every `every` points as a rebuild would."""
    shutil.rmtree(target, ignore_errors=True)
    optimizers = qe.EdgeOptimizersConfig(indexing_threshold=1, default_segment_number=segments)
    store = EdgeStore(target, COLLECTION, facet_index=False, optimizers=optimizers)
    rounds: list[float] = []
    last = 0

    def rebuild_when_due(written: int) -> None:
        nonlocal last
        if written - last >= every:
            started = time.perf_counter()
            store.optimize()
            rounds.append(round(time.perf_counter() - started, 2))
            last = written

    try:
        upsert_file(store, out, on_batch=rebuild_when_due)
        shape = store.segments()
    finally:
        store.close()
    return {"optimize_s": rounds, "optimize_s_total": round(sum(rounds), 1)} | shape


def _cpu_ms_per_search(
    before: dict[int, float], after: dict[int, float], roles: dict[int, str], searches: float
) -> dict[str, float]:
    return {
        roles.get(pid, "http"): round((after[pid] - before.get(pid, 0.0)) * 1000 / searches, 2)
        for pid in after
    }


def _own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def load(base: str, pid: int, queries: list[str]) -> dict[str, Any]:
    """CLIENTS clients for WINDOW_S, and the CPU each process (this client too) spent a search."""
    roles = service.process_roles(pid)
    before, own = service.cpu_seconds(pid), _own_cpu_s()
    started = time.perf_counter()
    result = service.throughput(base, queries, (CLIENTS,), WINDOW_S)[0]
    searches = result["searches_per_s"] * (time.perf_counter() - started)
    cpu = _cpu_ms_per_search(before, service.cpu_seconds(pid), roles, searches)
    cpu["client"] = round((_own_cpu_s() - own) * 1000 / searches, 2)
    return result | {"cpu_ms_per_search": cpu, "load_average": load_average(None)[0]}


def measure(data_dir: Path, queries: list[str]) -> dict[str, Any]:
    with service.running_service(data_dir) as svc:
        latency = service.latency(svc.base, queries, 1)
        return {
            "latency": {
                name: {"p50": row["p50"], "p99": row["p99"]} for name, row in latency.items()
            },
            "throughput": [load(svc.base, svc.process.pid, queries) for _ in range(2)],
        }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.index.rebuild_segments")
    parser.add_argument("--counts", default="8,6,5,4,2")
    parser.add_argument("--tier", default="100k")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=RESULTS / "rebuild-segments.json")
    args = parser.parse_args()
    docs, _, _ = load_vaswani(DATASET)
    queries = judged_queries(DATASET, 93)
    out = prepare_files(
        args.data, TIERS[args.tier], docs, model_encoder(args.data / "cache", False)
    )
    every = Settings().hnsw_threshold
    result: dict[str, Any] = {"tier": args.tier, "rebuild_every": every, "counts": {}}
    for count in (int(c) for c in args.counts.split(",")):
        target = out / "segments" / str(count)
        shape = build(out, target, count, every)
        result["counts"][count] = {"build": shape} | measure(target, queries)
        print(count, json.dumps(result["counts"][count]), flush=True)
        shutil.rmtree(target)
    result["machine"] = machine()
    write_results(args.out, result)


if __name__ == "__main__":
    main()
