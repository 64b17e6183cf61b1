"""Does scalar (int8) quantization pay on the embedded engine? (issue 16)

The tier's dense vectors in two Qdrant Edge shards, one of float32 only and one with int8 scalar
quantization kept in RAM (searches rescore on the originals, as Qdrant does by default), each
optimized; then, query by query in turn on both: a graph search (k=10, no filter; on the int8
shard also with 2x oversampling) and an exact search of a 10 % filter (the path of narrow
filters), timed, with recall@10 against numpy's exact answer. Also the optimize time and the
disk.

    .venv/bin/python -m bench.index.quantization [--tier 100k] [--data bench/.data]

Writes bench/results/quantization.json."""

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from app.store.fields import DENSE_VECTOR
from bench.harness.corpus import DATASET, judged_queries
from bench.harness.figures import disk_mib
from bench.harness.prepare import model_encoder, tier_dir
from bench.harness.results import DATA, RESULTS, machine, write_results

GROUPS = 10  # the filter keeps one group: 10 % of the points
BATCH = 1_000


def make_shard(path: Path, vectors: np.ndarray, quantized: bool) -> tuple[qe.EdgeShard, float]:
    """The shard written and optimized; returns it and the optimize's seconds."""
    quantization = (
        qe.ScalarQuantizationConfig(type=qe.ScalarType.Int8, quantile=0.99, always_ram=True)
        if quantized
        else None
    )
    params = qe.EdgeVectorParams(
        size=vectors.shape[1], distance=qe.Distance.Cosine, quantization_config=quantization
    )
    shard = qe.EdgeShard.create(str(path), qe.EdgeConfig(vectors={DENSE_VECTOR: params}))
    shard.update(qe.UpdateOperation.create_field_index("group", qe.PayloadSchemaType.Keyword))
    for start in range(0, len(vectors), BATCH):
        points = [
            qe.Point(
                id=i, vector={DENSE_VECTOR: vectors[i].tolist()}, payload={"group": str(i % GROUPS)}
            )
            for i in range(start, min(start + BATCH, len(vectors)))
        ]
        shard.update(qe.UpdateOperation.upsert_points(points))
    started = time.perf_counter()
    shard.optimize()
    return shard, time.perf_counter() - started


def search(
    shard: qe.EdgeShard, query: list[float], filtered: bool, oversampling: float | None
) -> tuple[list[int], float]:
    if filtered:
        params = qe.SearchParams(exact=True)
    elif oversampling is not None:
        rescored = qe.QuantizationSearchParams(rescore=True, oversampling=oversampling)
        params = qe.SearchParams(quantization=rescored)
    else:
        params = None
    request = qe.QueryRequest(
        limit=10,
        query=qe.Query.Nearest(query, using=DENSE_VECTOR),
        filter=qe.Filter(must=[qe.FieldCondition(key="group", match=qe.MatchValue("0"))])
        if filtered
        else None,
        params=params,
        with_payload=False,
    )
    started = time.perf_counter()
    points = shard.query(request)
    return [int(p.id) for p in points], (time.perf_counter() - started) * 1e3


def truth(vectors: np.ndarray, queries: np.ndarray, filtered: bool) -> list[set[int]]:
    ids = np.arange(len(vectors))
    if filtered:
        ids = ids[ids % GROUPS == 0]
    normed = vectors[ids] / np.linalg.norm(vectors[ids], axis=1, keepdims=True)
    scores = queries @ normed.T
    return [set(ids[np.argsort(-row)[:10]].tolist()) for row in scores]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.index.quantization")
    parser.add_argument("--tier", default="100k")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries")
    args = parser.parse_args()
    vectors = np.fromfile(tier_dir(args.data, args.tier) / "dense.f32", dtype=np.float32)
    vectors = vectors.reshape(-1, 384)
    queries = model_encoder(args.data / "cache", hashing=False).encode_array(
        judged_queries(DATASET)
    )
    result: dict[str, Any] = {"points": len(vectors), "queries": len(queries), "shards": {}}
    with tempfile.TemporaryDirectory(dir=args.data) as scratch:
        shards = {}
        for name, quantized in (("float32", False), ("int8", True)):
            shard, optimize_s = make_shard(Path(scratch) / name, vectors, quantized)
            shards[name] = shard
            result["shards"][name] = {
                "optimize_s": round(optimize_s, 1),
                "disk_mib": disk_mib(Path(scratch) / name),
            }
        # (shard, oversampling of the quantized candidates rescored; None: the engine's own)
        modes = {"float32": ("float32", None), "int8": ("int8", None), "int8, x2": ("int8", 2.0)}
        for filtered in (False, True):
            expected = truth(vectors, queries, filtered)
            timings: dict[str, list[float]] = {mode: [] for mode in modes}
            found: dict[str, list[float]] = {mode: [] for mode in modes}
            for _ in range(args.rounds):
                for query, wanted in zip(queries.tolist(), expected, strict=True):
                    for mode, (name, oversampling) in modes.items():  # in turn: one machine
                        ids, ms = search(shards[name], query, filtered, oversampling)
                        timings[mode].append(ms)
                        found[mode].append(len(wanted & set(ids)) / 10)
            case = "exact, 10 % filter" if filtered else "graph, no filter"
            result[case] = {
                mode: {
                    "p50_ms": round(statistics.median(timings[mode]), 3),
                    "recall_at_10": round(statistics.mean(found[mode]), 4),
                }
                for mode in modes
            }
        for shard in shards.values():
            shard.close()
    result["machine"] = machine()
    write_results(RESULTS / "quantization.json", result, indent=2, end="\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
