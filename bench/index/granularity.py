"""`granularity=document` against `chunk`, in process, before / after: what grouping costs a
hybrid search on short documents of one chunk each.

    python -m bench.index.granularity --data /tmp/granularity [--documents 100000] [--rounds 3]

Builds the index once in `--data` (kept for the next run; `--optimize` merges it and builds its
HNSW graph, minutes at 100k): documents of ~16 words, windows of Vaswani's abstracts, the
hashing embedder, 4 owners, the searcher (`u0`, group `g0`) seeing ~40 %. Then copies it twice
and opens both in this process: "before" reads every candidate's keys from the engine
(`facet_index=False`), "after" reads a first chunk's from the facet index. The same queries at
chunk and document granularity run on both, interleaved; medians of wall and CPU time (the
machine is shared: CPU time moves less with the load), the load average beside them."""

import argparse
import random
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from qdrant_client.http import models

from app.auth import Principal
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.chunking import Chunk
from app.ingest.documents import Document
from app.ingest.pipeline import chunk_payload, chunk_point_id
from app.search.algorithms import QueryEncoder
from app.search.service import Granularity, SearchQuery, SearchService
from app.store import fields
from app.store.edge import EdgeStore
from bench.harness.corpus import DATASET, FIRST_DAY, SEED, SPAN, judged_queries
from bench.harness.results import load_average_text

COLLECTION = "granularity"
WORDS = 16
BATCH = 1_000
SEARCHER = Principal("u0", groups=("group:g0",))


def documents(count: int) -> Iterator[tuple[Document, Chunk]]:
    words = re.sub(r"<[^>]+>|\d+", " ", (DATASET / "doc-text.trec").read_text()).split()
    rng = random.Random(SEED)
    for n in range(count):
        start = rng.randrange(len(words) - WORDS)
        content = " ".join(words[start : start + WORDS])
        acl = ("group:g0",) if rng.random() < 0.2 else ()  # u0 owns 25 %: sees 25 + 75 x 0.2
        document = Document(
            doc_type="file",
            doc_id=f"d{n:07d}",
            title="",
            content=content,
            owner=f"u{rng.randrange(4)}",
            modified_at=FIRST_DAY + rng.randrange(SPAN),
            file_path=f"/team{rng.randrange(50):02d}/d{n}.txt",
            tags=(f"tag{rng.randrange(20):02d}",),
            category=f"cat{rng.randrange(20):02d}",
            mime_type="text/plain",
            acl=acl,
        )
        yield document, Chunk(content, 0, len(content))


def build(data: Path, collection: str, count: int) -> None:
    store = EdgeStore(data, collection)
    dense, sparse = HashingEncoder(), Bm25Encoder()
    try:
        batch: list[tuple[Document, Chunk]] = []
        for pair in documents(count):
            batch.append(pair)
            if len(batch) == BATCH:
                write(store, batch, dense, sparse)
                batch = []
        write(store, batch, dense, sparse)
    finally:
        store.close()


def write(
    store: EdgeStore,
    batch: list[tuple[Document, Chunk]],
    dense: HashingEncoder,
    sparse: Bm25Encoder,
) -> None:
    texts = [fields.embedded_text(doc.title, chunk.text) for doc, chunk in batch]
    vectors = zip(dense.encode(texts), sparse.encode_documents(texts), strict=True)
    store.upsert(
        [
            models.PointStruct(
                id=chunk_point_id(doc.key, 0),
                vector={fields.DENSE_VECTOR: d, fields.SPARSE_VECTOR: s},
                payload=chunk_payload(doc, 0, 1, chunk) | {fields.REVISION: 1},
            )
            for (doc, chunk), (d, s) in zip(batch, vectors, strict=True)
        ]
    )


def measure(before: EdgeStore, after: EdgeStore, queries: list[str], rounds: int) -> None:
    encoder = QueryEncoder(HashingEncoder(), Bm25Encoder())
    services = {
        name: SearchService(s, encoder, rrf_k=60)
        for name, s in (("before", before), ("after", after))
    }
    wall: dict[tuple[str, Granularity], list[float]] = {}
    cpu: dict[tuple[str, Granularity], list[float]] = {}
    for _ in range(rounds):
        for text in queries:
            for granularity in Granularity:
                pages = []
                for name, service in services.items():
                    started, used = time.perf_counter(), time.process_time()
                    outcome = service.search(SEARCHER, SearchQuery(text, granularity=granularity))
                    wall.setdefault((name, granularity), []).append(time.perf_counter() - started)
                    cpu.setdefault((name, granularity), []).append(time.process_time() - used)
                    pages.append(([h.id for h in outcome.hits], outcome.total_found))
                if pages[0] != pages[1]:
                    raise SystemExit(f"different pages for {text!r} at {granularity}")
    print(f"load average {load_average_text()}")
    for (name, granularity), times in wall.items():
        print(
            f"{name:6} {granularity.value:8} p50 wall {statistics.median(times) * 1000:6.2f} ms,"
            f" CPU {statistics.median(cpu[(name, granularity)]) * 1000:6.2f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--optimize", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--collection", default=COLLECTION)
    args = parser.parse_args()
    if not args.data.exists():
        build(args.data, args.collection, args.documents)
        if args.optimize:
            store = EdgeStore(args.data, args.collection, facet_index=False)
            store.optimize()
            store.close()
    with tempfile.TemporaryDirectory(prefix="bench-granularity-") as scratch:
        copies = [Path(scratch) / name for name in ("before", "after")]
        for copy in copies:
            shutil.copytree(args.data, copy)
        before = EdgeStore(copies[0], args.collection, facet_index=False)
        after = EdgeStore(copies[1], args.collection)
        try:
            after.wait_for_facet_index()
            measure(before, after, judged_queries(count=args.queries), args.rounds)
        finally:
            before.close()
            after.close()


if __name__ == "__main__":
    main()
