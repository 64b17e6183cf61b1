"""Embedding speed: one query on ONNX Runtime (and on torch with --torch), the raw model's chunk
throughput, and ingest (chunk, embed, BM25, write to a fresh embedded store) on the same chunks.

    .venv/bin/python -m bench.index.embedding [--docs 120] [--torch]

The documents are the demo corpus's texts joined into long documents, so most chunks are full
(180 words, ~240 word pieces): the worst case for the model.
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from app.embeddings.dense import DenseEncoder, MiniLMEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.ingest.queue import BATCH_DOCUMENTS
from app.store.edge import EdgeStore
from bench.harness.model import chunk_texts, chunks_per_second, long_documents

QUERIES = [
    "quarterly budget review",
    "kubernetes deployment rollback",
    "incident postmortem database outage",
    "observing jupiter with a telescope",
    "What is the effect of a magnetic field on an electron beam?",
]


def query_ms(encoder: DenseEncoder, rounds: int) -> float:
    for query in QUERIES:
        encoder.encode([query])
    times = []
    for _ in range(rounds):
        for query in QUERIES:
            started = time.perf_counter()
            encoder.encode([query])
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def ingest_chunks_per_second(encoder: DenseEncoder, documents: list[dict[str, object]]) -> float:
    """As the service's queue does it: accept, then index batches of documents."""
    with tempfile.TemporaryDirectory() as folder:
        store = EdgeStore(Path(folder), "bench")
        try:
            indexer = Indexer(store, encoder, Bm25Encoder())
            chunks = 0
            started = time.perf_counter()
            for start in range(0, len(documents), BATCH_DOCUMENTS):
                batch = validate_batch(documents[start : start + BATCH_DOCUMENTS])
                chunks += sum(indexer.index(indexer.accept(batch)).values())
            return chunks / (time.perf_counter() - started)
        finally:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--torch", action="store_true", help="also time sentence-transformers")
    args = parser.parse_args()
    documents = long_documents(args.docs)
    onnx = MiniLMEncoder()
    texts = chunk_texts(documents)
    print(f"{len(documents)} documents, {len(texts)} chunks")
    print(f"ONNX query embedding, median: {query_ms(onnx, args.rounds):.1f} ms")
    raw = chunks_per_second(onnx, texts)
    ingest = ingest_chunks_per_second(onnx, documents)
    print(f"ONNX raw model: {raw:.1f} chunks/s; ingest: {ingest:.1f} chunks/s ({ingest / raw:.0%})")
    if args.torch:
        from app.embeddings.reference import SentenceTransformerEncoder

        reference = SentenceTransformerEncoder()
        print(f"torch query embedding, median: {query_ms(reference, args.rounds):.1f} ms")
        print(f"torch raw model: {chunks_per_second(reference, texts):.1f} chunks/s")


if __name__ == "__main__":
    main()
