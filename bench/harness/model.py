"""The embedding model's own rate, the yardstick ingest and extraction are held against: long
documents made of the demo corpus's texts (most chunks full, 180 words, ~240 word pieces: the
worst case for the model), the texts the indexer embeds for them, and how many a second the
model embeds."""

import json
import time
from collections.abc import Sequence

from app.embeddings.dense import DenseEncoder
from app.ingest.chunking import chunk_text
from app.ingest.demo import DEMO_CORPUS
from app.ingest.models import validate_batch


def long_documents(count: int) -> list[dict[str, object]]:
    lines = [line for line in DEMO_CORPUS.read_text(encoding="utf-8").splitlines() if line]
    texts = [str(json.loads(line)["content"]) for line in lines]
    return [
        {
            "doc_type": "note",
            "doc_id": f"long-{i}",
            "title": f"Long document {i}",
            "content": " ".join(texts[(i * 3 + k) % len(texts)] for k in range(6)),
            "owner": "bench",
            "modified_at": "2026-05-04T10:00:00Z",
        }
        for i in range(count)
    ]


def chunk_texts(documents: list[dict[str, object]]) -> list[str]:
    """The texts the indexer embeds: title, newline, chunk."""
    return [
        f"{doc.title}\n{chunk}"
        for doc in validate_batch(documents)
        for chunk in chunk_text(doc.content)
    ]


def chunks_per_second(encoder: DenseEncoder, texts: Sequence[str]) -> float:
    started = time.perf_counter()
    encoder.encode(texts)
    return len(texts) / (time.perf_counter() - started)
