"""The ingest rate this service reaches when embedding costs nothing: documents go through the
real pipeline (chunking, BM25, the remote encoder's HTTP round trips, Qdrant Edge writes) while a
loopback OpenAI-compatible server answers instantly with hashing vectors. That is the ceiling an
embedding server on a GPU box can lift ingest to on this machine; the model's own throughput on
the GPU box is not measured here.

    .venv/bin/python -m bench.index.ingest_ceiling [--documents 2000]
"""

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from app.embeddings.dense import HashingEncoder
from app.embeddings.remote import RemoteEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.store.edge import EdgeStore
from bench.harness.loopback import JsonHandler, loopback_server

BATCH = 16  # documents per indexing batch, as the queue takes them


class _Instant(JsonHandler):
    encoder = HashingEncoder()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        vectors = self.encoder.encode(body["input"])
        data = [{"index": i, "embedding": v} for i, v in enumerate(vectors)]
        self.send_json(200, json.dumps({"data": data}).encode())


def _documents(count: int) -> list[dict[str, Any]]:
    words = " ".join(f"term{i % 997} word{i % 113}" for i in range(300))  # ~3 chunks each
    return [
        {
            "doc_type": "file",
            "doc_id": str(i),
            "title": f"Document {i}",
            "content": f"{words} {i}",
            "owner": "bench",
            "modified_at": 1_700_000_000 + i,
            "file_path": f"/Bench/{i % 10}/doc{i}.md",
        }
        for i in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=2000)
    args = parser.parse_args()
    with loopback_server(_Instant) as base, tempfile.TemporaryDirectory() as directory:
        encoder = RemoteEncoder(f"{base}/v1", "hashing")
        store = EdgeStore(Path(directory), "bench")
        indexer = Indexer(store, encoder, Bm25Encoder())
        documents = _documents(args.documents)
        chunks = 0
        started = time.perf_counter()
        for start in range(0, len(documents), BATCH):
            jobs = indexer.accept(validate_batch(documents[start : start + BATCH]))
            chunks += sum(indexer.index(jobs).values())
        seconds = time.perf_counter() - started
        store.close()
        encoder.close()
    print(
        json.dumps(
            {
                "documents": args.documents,
                "chunks": chunks,
                "seconds": round(seconds, 1),
                "chunks_per_second": round(chunks / seconds, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
