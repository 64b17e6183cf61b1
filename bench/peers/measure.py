"""One engine, one fresh process: load the tier's points, time the hybrid scenarios, check every
result against the filter oracle, measure dense recall@10 against an exact scan. Prints JSON.

    .venv/bin/python -m bench.peers.measure --engine lancedb --tier 100k"""

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness.corpus import judged_queries
from bench.harness.figures import exact_dense, recall
from bench.harness.prepare import (
    COLLECTION,
    HTTP_LOAD_MAX,
    live_data_dir,
    model_encoder,
    read_peer_files,
    tier_dir,
)
from bench.harness.results import DATA, load_average
from bench.harness.service import scenarios
from bench.peers.engines import (
    Engine,
    LanceDB,
    LanceDBLive,
    Ours,
    Pgvector,
    PgvectorLive,
    QdrantLocal,
    Where,
)

HYBRID_SCENARIOS = [
    name
    for name, body in scenarios().items()
    if name.startswith("hybrid, ") and len(body) <= 3 and "granularity" not in body
]


def open_engine(
    name: str,
    out: Path,
    points: list[dict[str, Any]],
    vectors: np.ndarray,
    live: bool = False,
    bulk: int = 0,
) -> Engine:
    if name == "ours":
        from app.store.edge import EdgeStore

        data = live_data_dir(out) if live else out / "data"
        if not data.exists():  # opening would make an empty index
            raise SystemExit(f"no data directory at {data}")
        # With its facet index, as `serve` opens it (it counts narrow filters: EdgeStore), loaded
        # before the clock starts (from the snapshot a stop left, else read from the shard).
        store = EdgeStore(data, COLLECTION)
        store.wait_for_facet_index()
        return Ours(store)
    if name == "lancedb" and live:
        return LanceDBLive(out / "peers" / "lancedb-live", points, vectors, bulk)
    if name == "lancedb":
        return LanceDB(out / "peers" / "lancedb", points, vectors)
    if name == "pgvector" and live:
        return PgvectorLive(out / "peers" / "pgvector-live", points, vectors, bulk)
    if name == "pgvector":
        return Pgvector(out / "peers" / "pgvector", points, vectors)
    if name == "qdrant-local":
        return QdrantLocal(points, vectors)
    raise SystemExit(f"unknown engine {name}")


def measure(engine: Engine, points: list[dict[str, Any]], vectors: np.ndarray, queries: list[str],
            query_vectors: np.ndarray) -> dict[str, Any]:  # fmt: skip
    ids = [str(p["id"]) for p in points]
    row_of = {pid: n for n, pid in enumerate(ids)}
    results: dict[str, Any] = {}
    for name in HYBRID_SCENARIOS:
        where = Where.from_body(scenarios()[name])
        mask = np.array([where.matches(p) for p in points])
        for q in range(min(5, len(queries))):  # warm-up
            engine.hybrid(query_vectors[q], queries[q], where, 10)
        times, violations, short, recalls = [], 0, 0, []
        for text, vector in zip(queries, query_vectors, strict=True):
            started = time.perf_counter()
            found = engine.hybrid(vector, text, where, 10)
            times.append((time.perf_counter() - started) * 1000)
            violations += sum(1 for pid in found if not mask[row_of[pid]])
            short += len(found) < min(10, int(mask.sum()))
            exact = {ids[r] for r in exact_dense(vectors, mask, vector, 10)}
            found_dense = engine.dense(vector, where, 10)
            recalls.append(recall(found_dense, exact))
        ordered = sorted(times)
        results[name] = {
            "p50": round(statistics.median(times), 2),
            "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
            "eligible": int(mask.sum()),
            "violations": violations,
            "short_pages": short,
            "dense_recall@10": round(statistics.mean(recalls), 3),
        }
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", required=True)
    parser.add_argument("--tier", required=True)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--queries", type=int, default=93)
    parser.add_argument("--live", action="store_true", help="fed batch by batch (bench.index.live)")
    args = parser.parse_args()
    out = tier_dir(args.data, args.tier)
    points, vectors = read_peer_files(out)
    # A tier that ours loads through the store layer, the peers load in bulk as well.
    bulk = len(points) if args.live and len(points) > HTTP_LOAD_MAX else 0
    if args.live:  # the live index also holds the trickle's documents, sent after the tier
        more, more_vectors = read_peer_files(out, "trickle")
        points, vectors = points + more, np.concatenate([vectors, more_vectors])
    texts = judged_queries(count=args.queries)
    prepared = json.loads((out / ("live.json" if args.live else "prepared.json")).read_text())
    hashing = prepared["encoder"] != model_encoder(args.data / "cache", hashing=False).name
    encoder = model_encoder(args.data / "cache", hashing=hashing)
    query_vectors = encoder.encode_array(texts)
    encoder.save()
    started = time.perf_counter()
    engine = open_engine(args.engine, out, points, vectors, args.live, bulk)
    load_s = time.perf_counter() - started
    build_s = getattr(engine, "build_s", None)  # a kept index: its first build (live: the feed)
    live_s = getattr(engine, "live_s", None)  # the part fed batch by batch
    try:
        scenario_results = measure(engine, points, vectors, texts, query_vectors)
    finally:
        engine.close()
    print(
        json.dumps(
            {
                "engine": engine.name,
                "points": len(points),
                "load_s": round(load_s, 1),
                "build_s": build_s,
                "ingest_points_per_s": round(len(points) / build_s) if build_s else None,
                "bulk_points": bulk,
                "live_points_per_s": round((len(points) - bulk) / live_s) if live_s else None,
                "queries": len(texts),
                "scenarios": scenario_results,
                "load_average": load_average(),  # when it finished
            }
        )
    )


if __name__ == "__main__":
    main()
