"""The longest search while a rebuild copies the served shard (issue 35, item 4).

    python -m bench.index.copy_stall --tier-dir bench/.data/tiers/100k --scratch DIR \
        --out bench/results/copy-stall-LABEL.json

A served engine (`python -m app.engine_child`, as `serve` runs it) on a scratch copy of a
prepared tier's data directory; CLIENTS threads send hybrid searches (both branches in one
`query_batch`, as the service does) back to back on connections of their own, and one writer
sends the tier's points again, TRICKLE_POINTS every TRICKLE_EVERY_S. Each run measures a window
without a copy, then asks the engine to copy its shard (`START_COPY`, the rebuild's copy) and
drops the copy. Per run: the longest search overlapping each window, the copy's length, and the
longest write (writes wait for the part of the copy made at one moment of the writes)."""

import argparse
import json
import shutil
import statistics
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Client, Connection
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client.http import models

from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.index_settings import DIMENSION
from app.store.base import Query
from app.store.edge import DEFAULT_MIN_FREE_BYTES
from app.store.engine.launch import Launcher
from app.store.engine.shard_process import ShardProcess
from app.store.engine.wire import PROTOCOL, Call, Control, Failure
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR
from app.store.layout import IndexLayout
from bench.harness.prepare import COLLECTION, batched_points
from bench.harness.results import load_average, machine, write_results

CLIENTS = 16
DEPTH = 100
TRICKLE_POINTS = 10
TRICKLE_EVERY_S = 0.1
QUERIES = ("neutron scattering", "plasma waves in a magnetic field", "electron density")


@dataclass
class Timeline:
    """(start, end) of every search and write, from time.monotonic."""

    searches: list[tuple[float, float]] = field(default_factory=list)
    writes: list[tuple[float, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def longest(self, kind: str, start: float, end: float) -> float:
        """The longest call (ms) of `kind` that overlapped [start, end]."""
        with self.lock:
            calls = list(getattr(self, kind))
        return max(((b - a) * 1000 for a, b in calls if b >= start and a <= end), default=0.0)


def connect(engine: ShardProcess) -> Connection:
    connection = Client(engine.socket, "AF_UNIX", authkey=engine.key)
    connection.send(Call(Control.HELLO, (PROTOCOL,)))
    connection.recv()
    return connection


def ask(connection: Connection, method: str, *args: Any) -> Any:
    connection.send(Call(method, args))
    reply = connection.recv()
    if isinstance(reply, Failure):
        raise RuntimeError(reply.message)
    return reply


def hybrid_queries() -> list[list[Query]]:
    dense, sparse = HashingEncoder(), Bm25Encoder()
    asked = []
    for text in QUERIES:
        vector = models.NearestQuery(nearest=dense.encode([text])[0])
        words = models.NearestQuery(nearest=sparse.encode_query(text))
        keys = ["doc_key", "chunk_index"]
        asked.append(
            [
                Query(vector, DEPTH, DENSE_VECTOR, payload_keys=keys),
                Query(words, DEPTH, SPARSE_VECTOR, payload_keys=keys),
            ]
        )
    return asked


def search_loop(engine: ShardProcess, timeline: Timeline, stop: threading.Event, n: int) -> None:
    connection = connect(engine)
    asked = hybrid_queries()
    while not stop.is_set():
        started = time.monotonic()
        ask(connection, "query_batch", asked[n % len(asked)])
        with timeline.lock:
            timeline.searches.append((started, time.monotonic()))
        n += 1
    connection.close()


def write_loop(engine: ShardProcess, tier: Path, timeline: Timeline, stop: threading.Event) -> None:
    connection = connect(engine)
    vectors = np.memmap(tier / "dense.f32", dtype=np.float32, mode="r").reshape(-1, DIMENSION)
    sparse = Bm25Encoder()
    start = 0
    for part in batched_points(tier / "points.jsonl", TRICKLE_POINTS):
        if stop.wait(TRICKLE_EVERY_S):
            break
        bm25 = sparse.encode_documents([str(p["embed_text"]) for p in part])
        points = [
            models.PointStruct(
                id=str(p["id"]),
                vector={DENSE_VECTOR: vectors[start + n].tolist(), SPARSE_VECTOR: bm25[n]},
                payload={k: v for k, v in p.items() if k not in ("id", "embed_text")},
            )
            for n, p in enumerate(part)
        ]
        start += len(part)
        began = time.monotonic()
        ask(connection, "upsert", points)
        with timeline.lock:
            timeline.writes.append((began, time.monotonic()))
    connection.close()


def one_copy(
    engine: ShardProcess, layout: IndexLayout, timeline: Timeline, window: float
) -> dict[str, float]:
    quiet_end = time.monotonic()
    time.sleep(window)
    copy = layout.next_generation()
    began = time.monotonic()
    engine.control(Control.START_COPY, str(copy))
    ended = time.monotonic()
    engine.control(Control.STOP_COPY)
    time.sleep(0.5)  # a search that started during the copy ends
    run = {
        "copy_ms": round((ended - began) * 1000, 1),
        "longest_search_quiet_ms": round(
            timeline.longest("searches", quiet_end, quiet_end + window), 1
        ),
        "longest_search_copy_ms": round(timeline.longest("searches", began, ended), 1),
        "longest_write_quiet_ms": round(
            timeline.longest("writes", quiet_end, quiet_end + window), 1
        ),
        "longest_write_copy_ms": round(timeline.longest("writes", began, ended), 1),
        "load_average": load_average()[0],
    }
    shutil.rmtree(copy, ignore_errors=True)
    for path in (IndexLayout.journal(copy), IndexLayout.facet_snapshot(copy)):
        path.unlink(missing_ok=True)
    return run


def measure(tier: Path, scratch: Path, runs: int, window: float) -> dict[str, Any]:
    data_dir = scratch / "data"
    if not data_dir.exists():
        shutil.copytree(tier / "data", data_dir)
    launcher = Launcher.new(data_dir, COLLECTION, DEFAULT_MIN_FREE_BYTES)
    engine = ShardProcess.watch(
        launcher.launch(launcher.socket(1)), launcher.socket(1), launcher.key
    )
    engine.ready.wait()
    if engine.error:
        raise RuntimeError(engine.error)
    time.sleep(3.0)  # its read-back
    layout = IndexLayout.of(data_dir, COLLECTION)
    timeline, stop = Timeline(), threading.Event()
    threads = [
        threading.Thread(target=search_loop, args=(engine, timeline, stop, n))
        for n in range(CLIENTS)
    ]
    threads.append(threading.Thread(target=write_loop, args=(engine, tier, timeline, stop)))
    for thread in threads:
        thread.start()
    try:
        time.sleep(2.0)
        results = []
        for _ in range(runs):
            results.append(one_copy(engine, layout, timeline, window))
            print(json.dumps(results[-1]), flush=True)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        engine.stop()
        shutil.rmtree(launcher.sockets, ignore_errors=True)
    medians = {key: statistics.median(r[key] for r in results) for key in results[0]}
    return {"runs": results, "medians": medians}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.index.copy_stall")
    parser.add_argument("--tier-dir", type=Path, required=True)
    parser.add_argument("--scratch", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--window", type=float, default=3.0, help="seconds without a copy per run")
    parser.add_argument("--out", type=Path, required=True, help="the results file (JSON)")
    args = parser.parse_args()
    measured = measure(args.tier_dir, args.scratch, args.runs, args.window)
    write_results(args.out, {"machine": machine(), **measured})
    print(json.dumps(measured["medians"]))


if __name__ == "__main__":
    main()
