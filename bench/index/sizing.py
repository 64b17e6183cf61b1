"""RAM and disk of the embedded engine per N chunks, for the sizing table of docs/deployment.md.

Writes N chunk points shaped like the service's (384-d unit vectors, BM25 sparse vectors of
~180-word chunks, the full chunk payload with its text) into a fresh Qdrant Edge shard, flushes,
optimizes (builds the HNSW index), then measures the directory on disk and, in a fresh process,
the resident memory of a loaded shard answering filtered hybrid queries. The vector values are
random (size and memory do not depend on them); the text is Zipf-distributed words.

    .venv/bin/python -m bench.index.sizing [--chunks 100000] [--dir /tmp/sizing]
"""

import argparse
import itertools
import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from qdrant_client.http import models

from app.embeddings.sparse import Bm25Encoder
from app.index_settings import DIMENSION as DENSE_SIZE
from app.ingest.chunking import Chunk
from app.ingest.documents import Document
from app.ingest.pipeline import chunk_payload, chunk_point_id
from app.store.base import Query
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR

WORDS_PER_CHUNK = 180
BATCH = 1000


def _vocabulary(size: int, rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choices(letters, k=rng.randint(3, 10))) for _ in range(size)]


def _points(
    start: int, count: int, rng: random.Random, words: list[str]
) -> list[models.PointStruct]:
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(words))))
    texts = [
        " ".join(rng.choices(words, cum_weights=cumulative, k=WORDS_PER_CHUNK))
        for _ in range(count)
    ]
    sparse = Bm25Encoder().encode_documents(texts)
    dense = np.random.default_rng(start).normal(size=(count, DENSE_SIZE)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    points = []
    for i, text in enumerate(texts):
        n = start + i
        doc = Document(
            doc_type="file",
            doc_id=str(n // 4),
            title=f"Document {n // 4}",
            content="",
            owner=f"user{n % 50}",
            modified_at=1_700_000_000 + n,
            file_path=f"/Projects/p{n % 20}/doc{n // 4}.md",
            tags=(f"tag{n % 30}",),
            category=None,
            mime_type="text/markdown",
            acl=(f"group:g{n % 10}",),
        )
        points.append(
            models.PointStruct(
                id=chunk_point_id(doc.key, n % 4),
                vector={DENSE_VECTOR: dense[i].tolist(), SPARSE_VECTOR: sparse[i]},
                payload=chunk_payload(doc, n % 4, 4, Chunk(text, 0, len(text))),
            )
        )
    return points


def _du(path: Path) -> int:
    """Allocated bytes, like `du`: the engine preallocates sparse files."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file())


def build(directory: Path, chunks: int) -> dict[str, float]:
    rng = random.Random(7)
    words = _vocabulary(20_000, rng)
    store = EdgeStore(directory, "sizing")
    started = time.perf_counter()
    for start in range(0, chunks, BATCH):
        store.upsert(_points(start, min(BATCH, chunks - start), rng, words))
    written = time.perf_counter() - started
    store._shard.flush()
    before = _du(directory)
    started = time.perf_counter()
    store._shard.optimize()
    optimized = time.perf_counter() - started
    store.close()
    return {
        "write_s": written,
        "optimize_s": optimized,
        "disk_before_optimize_mib": before / 2**20,
        "disk_mib": _du(directory) / 2**20,
    }


def measure_memory(directory: Path) -> dict[str, float]:
    """In this (fresh) process: RSS before and after loading the shard and querying it."""
    baseline = _rss_mib()
    store = EdgeStore(directory, "sizing")
    rng = np.random.default_rng(1)
    sparse = Bm25Encoder()
    for i in range(50):
        vector = rng.normal(size=DENSE_SIZE)
        flt = models.Filter(
            must=[
                models.FieldCondition(
                    key="readers", match=models.MatchAny(any=[f"group:g{i % 10}"])
                )
            ]
        )
        store.query(
            Query(
                query=models.RrfQuery(rrf=models.Rrf(k=60)),
                prefetch=[
                    models.Prefetch(
                        query=models.NearestQuery(
                            nearest=(vector / np.linalg.norm(vector)).tolist()
                        ),
                        using=DENSE_VECTOR,
                        limit=100,
                        filter=flt,
                    ),
                    models.Prefetch(
                        query=models.NearestQuery(nearest=sparse.encode_query("quarterly report")),
                        using=SPARSE_VECTOR,
                        limit=100,
                        filter=flt,
                    ),
                ],
                limit=10,
            )
        )
    loaded = _rss_mib()
    store.close()
    return {"rss_shard_mib": loaded - baseline, "rss_process_mib": loaded}


def _rss_mib() -> float:
    """Resident memory now (not the peak: the peak may come from the imports)."""
    status = Path("/proc/self/status").read_text(encoding="utf-8")
    kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/astrolabe-sizing"))
    parser.add_argument("--measure-memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_memory:
        print(json.dumps(measure_memory(args.dir)))
        return
    shutil.rmtree(args.dir, ignore_errors=True)
    result: dict[str, float] = {"chunks": args.chunks} | build(args.dir, args.chunks)
    child = subprocess.run(
        [sys.executable, "-m", "bench.index.sizing", "--dir", str(args.dir), "--measure-memory"],
        capture_output=True,
        text=True,
        check=True,
    )
    result |= json.loads(child.stdout.strip().splitlines()[-1])
    print(json.dumps(result, indent=2))
    shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
