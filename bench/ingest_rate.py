"""Ingest throughput against the raw model: the same texts embedded by the model alone, then
indexed through the service's `Indexer` (validate, placeholders, chunk, dense + BM25, replace)
into a fresh embedded store. The service should reach >= 90 % of the model's rate."""

import tempfile
import time
from pathlib import Path
from typing import Any

from app.embeddings.dense import DenseEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.documents import validate_batch
from app.ingest.pipeline import Indexer
from app.store.edge import EdgeStore
from bench.corpus import embed_text, real_chunks
from bench.prepare import COLLECTION


def measure(docs: dict[str, str], encoder: DenseEncoder, count: int = 256) -> dict[str, Any]:
    chunks = real_chunks(dict(list(docs.items())[1000 : 1000 + count]))  # not the cached ones
    encoder.encode([embed_text(chunks[0].doc, chunks[0].text)])  # warm-up
    started = time.perf_counter()
    encoder.encode([embed_text(c.doc, c.text) for c in chunks])
    raw = len(chunks) / (time.perf_counter() - started)
    raw_docs = [
        c.doc.to_payload() | {"modified_at": c.doc.modified_at} for c in chunks if c.index == 0
    ]
    with tempfile.TemporaryDirectory() as tmp:
        store = EdgeStore(Path(tmp), COLLECTION)
        try:
            indexer = Indexer(store, encoder, Bm25Encoder())
            written = 0
            started = time.perf_counter()
            for start in range(0, len(raw_docs), 32):
                jobs = indexer.accept(validate_batch(raw_docs[start : start + 32]))
                written += sum(indexer.index(jobs).values())
            service = written / (time.perf_counter() - started)
        finally:
            store.close()
    return {
        "chunks": len(chunks),
        "model_chunks_per_s": round(raw, 1),
        "service_chunks_per_s": round(service, 1),
        "ratio": round(service / raw, 3),
    }
