"""Plain segments vs HNSW (`optimize()`), and why searches are slower right after a bulk load.

On a fresh copy of a tier's points, in one process: load through the store layer, then time
the engine side of hybrid and dense searches (access rule only, ~5 %, one folder) and dense
recall@10 against an exact scan (numpy) at each step: right after the load, after `flush()`,
after a reopen, after `optimize()` (timed, with a watchdog thread that measures how long the
GIL stays held), and after a reopen of the optimized shard.

    .venv/bin/python -m bench.hnsw --tier 100k"""

import argparse
import json
import shutil
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from app.store.edge import EdgeStore
from bench.corpus import load_vaswani
from bench.peers.engines import Ours, Where
from bench.peers.measure import exact_dense
from bench.prepare import COLLECTION, model_encoder, read_peer_files, tier_dir, upsert_points
from bench.service import scenarios

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


def probe(store: EdgeStore, points: list[dict[str, Any]], vectors: np.ndarray,
          texts: list[str], query_vectors: np.ndarray) -> dict[str, Any]:  # fmt: skip
    engine = Ours(store)
    ids = [str(p["id"]) for p in points]
    result: dict[str, Any] = {"store": store.segments()}
    for name in SCENARIOS:
        where = Where.from_body(scenarios()[name])
        mask = np.array([where.matches(p) for p in points])
        for q in range(3):
            engine.hybrid(query_vectors[q], texts[q], where, 10)
        hybrid, dense, recall = [], [], []
        for text, vector in zip(texts, query_vectors, strict=True):
            started = time.perf_counter()
            engine.hybrid(vector, text, where, 10)
            hybrid.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            found = engine.dense(vector, where, 10)
            dense.append((time.perf_counter() - started) * 1000)
            exact = {ids[r] for r in exact_dense(vectors, mask, vector, 10)}
            recall.append(len(exact & set(found)) / len(exact) if exact else 1.0)
        result[name] = {
            "hybrid_p50": round(statistics.median(hybrid), 2),
            "dense_p50": round(statistics.median(dense), 2),
            "dense_recall@10": round(statistics.mean(recall), 3),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tier", default="100k")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parent / ".data")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args()
    out = tier_dir(args.data, args.tier)
    points, vectors = read_peer_files(out)
    _, queries, qrels = load_vaswani()
    texts = [queries[q] for q in sorted(queries) if q in qrels][: args.queries]
    query_vectors = model_encoder(args.data / "cache", hashing=False).encode_array(texts)
    work = out / "hnsw"
    shutil.rmtree(work, ignore_errors=True)
    steps: dict[str, Any] = {}
    store = EdgeStore(work, COLLECTION)
    started = time.perf_counter()
    upsert_points(store, points, vectors)
    steps["load_s"] = round(time.perf_counter() - started, 1)
    print(f"loaded in {steps['load_s']} s", flush=True)
    steps["after bulk load"] = probe(store, points, vectors, texts, query_vectors)
    store.close()
    store = EdgeStore(work, COLLECTION)
    steps["after reopen"] = probe(store, points, vectors, texts, query_vectors)
    with GilWatch() as watch:
        started = time.perf_counter()
        store.optimize()
        steps["optimize_s"] = round(time.perf_counter() - started, 1)
    steps["optimize_longest_gil_hold_s"] = round(watch.longest, 2)
    print(f"optimized in {steps['optimize_s']} s", flush=True)
    steps["after optimize"] = probe(store, points, vectors, texts, query_vectors)
    store.close()
    store = EdgeStore(work, COLLECTION)
    steps["optimized, after reopen"] = probe(store, points, vectors, texts, query_vectors)
    store.close()
    steps["disk_mib_optimized"] = round(
        sum(f.stat().st_size for f in work.rglob("*") if f.is_file()) / 2**20, 1
    )
    shutil.rmtree(work, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"hnsw-{args.tier}.json").write_text(json.dumps(steps, indent=1))
    print(json.dumps(steps, indent=1))


if __name__ == "__main__":
    main()
