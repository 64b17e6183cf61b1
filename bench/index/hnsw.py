"""Plain segments vs HNSW (`optimize()`), and why searches are slower right after a bulk load.

One process, every comparison interleaved query by query (so a busy machine slows both sides
alike and the ratios hold):

1. load the tier's points through the store layer into shard A (timed);
2. flush A, copy its directory to B and open B (the GIL hold of the load is measured); probe A
   ("right after bulk load") against B ("after reopen");
3. optimize A (timed, with a watchdog thread measuring the longest GIL hold), copy it to C and
   open C; probe B ("plain") against A ("optimized, in the process that optimized") and C
   ("optimized, after reopen"), plus search-param variants on C.

A probe times, per scenario (access rule only, ~5 %, one folder): the service's hybrid search
(engine side, in-process), dense limit 10 and limit 100 (engine only, no payload), with dense
recall@10 and recall@100 against an exact scan (numpy) of the same filter.

    .venv/bin/python -m bench.index.hnsw --tier 100k --data /work/bench-data"""

import argparse
import json
import shutil
import statistics
import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe
from qdrant_client.http import models

from app.store import translate
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR
from bench.harness.corpus import judged, load_vaswani
from bench.harness.figures import disk_mib, exact_dense, recall, timed, timed_ms
from bench.harness.prepare import COLLECTION, TIERS, model_encoder, prepare_files, read_peer_files
from bench.harness.prepare import upsert_points as load_points
from bench.harness.results import DATA, RESULTS, write_results
from bench.harness.service import scenarios
from bench.peers.engines import Ours, Where

SCENARIOS = ["hybrid, access rule only", "hybrid, ~5 % (category)", "hybrid, one folder (0.1 %)"]


class GilWatch:
    """A thread that wakes every 5 ms; the longest gap between wake-ups is the longest time
    the interpreter could not run Python (the GIL held by the engine)."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.is_set():
            time.sleep(0.005)
            now = time.perf_counter()
            self.longest = max(self.longest, now - last - 0.005)
            last = now

    def __enter__(self) -> "GilWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Side:
    """One thing to time: a store, and the search params of its dense queries."""

    store: EdgeStore
    params: qe.SearchParams | None = None
    hybrid: bool = True  # the service's hybrid path (no params: it runs as the service does)


@dataclass
class Workload:
    points: list[dict[str, Any]]
    vectors: np.ndarray
    texts: list[str]
    query_vectors: np.ndarray


def dense_ids(side: Side, vector: np.ndarray, flt: Any, limit: int) -> list[str]:
    request = qe.QueryRequest(
        limit=limit,
        query=translate.query(models.NearestQuery(nearest=vector.tolist()), DENSE_VECTOR),
        filter=translate.filter_(flt),
        with_payload=False,
        params=side.params,
    )
    return [str(p.id) for p in side.store._shard.query(request)]


def summary(row: dict[str, list[float]]) -> dict[str, float]:
    """Medians of the timings, means of the recalls."""
    return {
        key: round(statistics.mean(v) if key.startswith("recall") else statistics.median(v), 3)
        for key, v in row.items()
    }


def probe(sides: dict[str, Side], work: Workload) -> dict[str, Any]:
    ids = [str(p["id"]) for p in work.points]
    engines = {name: Ours(side.store) for name, side in sides.items()}
    result: dict[str, Any] = {name: {"store": s.store.segments()} for name, s in sides.items()}
    for scenario in SCENARIOS:
        where = Where.from_body(scenarios()[scenario])
        mask = np.array([where.matches(p) for p in work.points])
        flt = next(iter(engines.values()))._filter(where)
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in sides}
        for q, (text, vector) in enumerate(zip(work.texts, work.query_vectors, strict=True)):
            exact10 = {ids[r] for r in exact_dense(work.vectors, mask, vector, 10)}
            exact100 = {ids[r] for r in exact_dense(work.vectors, mask, vector, 100)}
            for name, side in sides.items():
                if q < 3:  # warm-up, not recorded
                    dense_ids(side, vector, flt, 100)
                    continue
                row = samples[name]
                if side.hybrid:
                    engine = engines[name]
                    ms, _ = timed_ms(partial(engine.hybrid, vector, text, where, 10))
                    row.setdefault("hybrid_ms", []).append(ms)
                ms, found = timed_ms(partial(dense_ids, side, vector, flt, 10))
                row.setdefault("dense10_ms", []).append(ms)
                row.setdefault("recall@10", []).append(recall(found, exact10))
                ms, found = timed_ms(partial(dense_ids, side, vector, flt, 100))
                row.setdefault("dense100_ms", []).append(ms)
                row.setdefault("recall@100", []).append(recall(found, exact100))
        for name, row in samples.items():
            result[name][scenario] = summary(row) | {"matching_points": int(mask.sum())}
    return result


def reopen_copy(store: EdgeStore, source: Path, target: Path) -> tuple[EdgeStore, float]:
    """Flush `store`, copy its directory and open the copy; the longest GIL hold of the open."""
    store._shard.flush()
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    with GilWatch() as watch:
        copy = EdgeStore(target.parent, COLLECTION, facet_index=False)
    return copy, round(watch.longest, 3)


def run(tier: str, data: Path, queries: int) -> dict[str, Any]:
    docs, all_queries, qrels = load_vaswani()
    out = prepare_files(data, TIERS[tier], docs, model_encoder(data / "cache", hashing=False))
    points, vectors = read_peer_files(out)
    texts = list(judged(all_queries, qrels).values())[:queries]
    query_vectors = model_encoder(data / "cache", hashing=False).encode_array(texts)
    work = Workload(points, vectors, texts, query_vectors)
    scratch = out / "hnsw"
    shutil.rmtree(scratch, ignore_errors=True)
    paths = {k: scratch / k / COLLECTION for k in ("a", "b", "c")}
    steps: dict[str, Any] = {"tier": tier, "points": len(points), "queries": len(texts) - 3}
    a = EdgeStore(paths["a"].parent, COLLECTION, facet_index=False)
    seconds, _ = timed(lambda: load_points(a, points, vectors))
    steps["load_s"] = round(seconds, 1)
    print(f"{tier}: loaded in {steps['load_s']} s", flush=True)
    b, steps["plain_load_gil_hold_s"] = reopen_copy(a, paths["a"], paths["b"])
    steps["bulk load vs reopen"] = probe(
        {"right after bulk load": Side(a), "after reopen": Side(b)}, work
    )
    steps["disk_mib_plain"] = disk_mib(paths["b"])
    print(f"{tier}: probed bulk load vs reopen", flush=True)
    with GilWatch() as watch:
        started = time.perf_counter()
        a.optimize()
        steps["optimize_s"] = round(time.perf_counter() - started, 1)
    steps["optimize_longest_gil_hold_s"] = round(watch.longest, 2)
    print(f"{tier}: optimized in {steps['optimize_s']} s", flush=True)
    c, steps["optimized_load_gil_hold_s"] = reopen_copy(a, paths["a"], paths["c"])
    steps["disk_mib_optimized"] = disk_mib(paths["c"])
    steps["plain vs optimized"] = probe(
        {
            "plain": Side(b),
            "optimized, same process": Side(a),
            "optimized, after reopen": Side(c),
            "optimized, hnsw_ef=200": Side(c, qe.SearchParams(hnsw_ef=200), hybrid=False),
            "optimized, exact": Side(c, qe.SearchParams(exact=True), hybrid=False),
        },
        work,
    )
    for store in (a, b, c):
        store.close()
    shutil.rmtree(scratch, ignore_errors=True)
    return steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tier", default="100k")
    parser.add_argument("--queries", type=int, default=93)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    steps = run(args.tier, args.data, args.queries)
    write_results(args.out / f"hnsw-{args.tier}.json", steps)
    print(json.dumps(steps, indent=1))


if __name__ == "__main__":
    main()
