"""The two designs for a live index, measured on the 100k tier's points (issue 16):

- **segments the service manages**: the points split into sealed shards (optimized) plus one
  fresh plain shard; a hybrid search fans out to every shard, both branches, and fuses in
  Python. Measured: its latency against one optimized shard (interleaved query by query), the
  longest GIL hold of opening a sealed shard inside the serving process (what a swap costs a
  search), and how much BM25 scored with each shard's own IDF changes the top 10.
- **engine processes** (what `serve` runs): the same hybrid search through `ProcessStore` (an
  engine process, a Unix socket) against the same store in process, interleaved.

    .venv/bin/python -m bench.index.live_designs --data bench/.data

Writes bench/results/live_designs.json."""

import argparse
import json
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe
from qdrant_client.http import models

from app.config import Settings
from app.embeddings.sparse import Bm25Encoder
from app.search.algorithms import NO_PAYLOAD, Encoded, FusionMethod, Hybrid
from app.store.base import Hit, Query, Store
from app.store.edge import EdgeStore
from app.store.engine.supervisor import Supervisor
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR
from app.store.layout import IndexLayout
from bench.harness.corpus import judged, load_vaswani
from bench.harness.prepare import COLLECTION, TIERS, model_encoder, prepare_files, read_peer_files
from bench.harness.prepare import upsert_points as load_points
from bench.harness.results import DATA, RESULTS, write_results
from bench.index.hnsw import GilWatch
from bench.peers.engines import Ours, Where

SEALED = 5  # sealed shards of equal size
FRESH = 5_000  # points in the fresh shard
LEG = 100
RRF_K = 60


def build_segments(root: Path, points: list[dict[str, Any]], vectors: np.ndarray) -> list[Path]:
    """SEALED optimized shards and one plain one (kept for the next run)."""
    sealed = (len(points) - FRESH) // SEALED
    bounds = [n * sealed for n in range(SEALED + 1)] + [len(points)]
    dirs = [root / f"segment{n}" for n in range(SEALED + 1)]
    if (root / "built").exists():
        return dirs
    shutil.rmtree(root, ignore_errors=True)
    for n, directory in enumerate(dirs):
        store = EdgeStore(directory, COLLECTION, facet_index=False)
        load_points(store, points[bounds[n] : bounds[n + 1]], vectors[bounds[n] : bounds[n + 1]])
        if n < SEALED:
            store.optimize()
        store.close()
    (root / "built").write_text("")
    return dirs


def fused(stores: list[EdgeStore], vector: np.ndarray, sparse: models.SparseVector,
          flt: models.Filter) -> tuple[list[str], list[str]]:  # fmt: skip
    """The fan-out: both branches on every shard, merged by score, fused by RRF in Python;
    and the merged BM25 top 10 (each shard's IDF)."""
    dense: list[Hit] = []
    bm25: list[Hit] = []
    for store in stores:
        nearest = models.NearestQuery(nearest=vector.tolist())
        dense += store.query(Query(nearest, LEG, DENSE_VECTOR, flt, payload_keys=NO_PAYLOAD))
        nearest = models.NearestQuery(nearest=sparse)
        bm25 += store.query(Query(nearest, LEG, SPARSE_VECTOR, flt, payload_keys=NO_PAYLOAD))
    dense.sort(key=lambda h: -h.score)
    bm25.sort(key=lambda h: -h.score)
    scores: dict[str, float] = {}
    for branch in (dense[:LEG], bm25[:LEG]):
        for rank, hit in enumerate(branch):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1 / (RRF_K + rank + 1)
    ranked = sorted(scores, key=lambda i: -scores[i])
    return ranked[:10], [h.id for h in bm25[:10]]


def hybrid_ids(store: Store, vector: np.ndarray, text: str, flt: models.Filter) -> list[str]:
    encoded = Encoded(dense=vector.tolist(), sparse=Bm25Encoder().encode_query(text))
    hits = Hybrid(store, FusionMethod.RRF, RRF_K).candidates(
        query=encoded, where=flt, depth=LEG, score_threshold=None, payload_keys=NO_PAYLOAD
    )
    return [h.id for h in hits[:10]]


def bm25_ids(store: EdgeStore, sparse: models.SparseVector, flt: models.Filter) -> list[str]:
    hits = store.query(Query(query=models.NearestQuery(nearest=sparse), using=SPARSE_VECTOR,
                       filter=flt, limit=10, payload_keys=NO_PAYLOAD))  # fmt: skip
    return [h.id for h in hits]


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def segments_design(optimized: EdgeStore, dirs: list[Path], work: list[tuple[Any, str]],
                    flt: models.Filter) -> dict[str, Any]:  # fmt: skip
    with GilWatch() as watch:
        opened = qe.EdgeShard.load(str(IndexLayout.of(dirs[0], COLLECTION).current()))
    opened.close()
    stores = [EdgeStore(d, COLLECTION, facet_index=False) for d in dirs]
    sparse = Bm25Encoder()
    one, many, fused_overlap, idf_overlap = [], [], [], []
    try:
        for vector, text in work:
            query = sparse.encode_query(text)
            started = time.perf_counter()
            single = hybrid_ids(optimized, vector, text, flt)
            one.append(time.perf_counter() - started)
            started = time.perf_counter()
            fanned, fanned_bm25 = fused(stores, vector, query, flt)
            many.append(time.perf_counter() - started)
            fused_overlap.append(len(set(single) & set(fanned)) / 10)
            idf_overlap.append(len(set(bm25_ids(optimized, query, flt)) & set(fanned_bm25)) / 10)
    finally:
        for store in stores:
            store.close()
    return {
        "shards": len(dirs),
        "hybrid_one_optimized_shard_p50_ms": median_ms(one),
        "hybrid_fan_out_p50_ms": median_ms(many),
        "swap_in_gil_hold_s": round(watch.longest, 3),
        "top10_overlap_hybrid": round(statistics.mean(fused_overlap), 3),
        "top10_overlap_bm25_per_shard_idf": round(statistics.mean(idf_overlap), 3),
    }


def processes_design(whole: Path, scratch: Path, work: list[tuple[Any, str]],
                     flt: models.Filter) -> dict[str, Any]:  # fmt: skip
    """The same shard in process and (a copy) behind an engine process, interleaved."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(whole / COLLECTION, scratch / COLLECTION)
    local = EdgeStore(whole, COLLECTION, facet_index=False)
    engine = Supervisor(Settings(data_dir=scratch, collection=COLLECTION), threshold=10**12)
    remote = engine.start()
    in_process, through_socket = [], []
    try:
        for vector, text in work:
            started = time.perf_counter()
            hybrid_ids(local, vector, text, flt)
            in_process.append(time.perf_counter() - started)
            started = time.perf_counter()
            hybrid_ids(remote, vector, text, flt)
            through_socket.append(time.perf_counter() - started)
    finally:
        engine.close()
        local.close()
    return {
        "hybrid_in_process_p50_ms": median_ms(in_process),
        "hybrid_engine_process_p50_ms": median_ms(through_socket),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.index.live_designs")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    docs, queries, qrels = load_vaswani()
    encoder = model_encoder(args.data / "cache", hashing=False)
    tier = prepare_files(args.data, TIERS["100k"], docs, encoder)
    points, vectors = read_peer_files(tier)
    texts = list(judged(queries, qrels).values())[: args.queries]
    work = list(zip(encoder.encode_array(texts), texts, strict=True))
    encoder.save()
    scratch = tier / "designs"  # kept for the next run
    whole = scratch / "one"  # every point in one optimized shard
    if not (whole / "built").exists():
        shutil.rmtree(whole, ignore_errors=True)
        store = EdgeStore(whole, COLLECTION, facet_index=False)
        load_points(store, points, vectors)
        store.optimize()
        store.close()
        (whole / "built").write_text("")
    segments = build_segments(scratch / "segments", points, vectors)
    optimized = EdgeStore(whole, COLLECTION, facet_index=False)
    flt = Ours(optimized)._filter(Where())
    try:
        result = {"segments": segments_design(optimized, segments, work, flt)}
    finally:
        optimized.close()
    result["processes"] = processes_design(whole, scratch / "processes", work, flt)
    write_results(args.out / "live_designs.json", result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
