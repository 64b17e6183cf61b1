"""The live benchmark sends documents over HTTP and expects the service to chunk them exactly
as the bench's points (their vectors come from the bench's tables by the chunk text)."""

import numpy as np
import pytest

from app.ingest.chunking import chunk_spans
from bench.harness.corpus import CHUNK_WORDS, DATASET, embed_text, load_vaswani, real_chunks
from bench.harness.prepare import Tier, derived_points
from bench.index.live import tier_documents


@pytest.mark.skipif(not DATASET.exists(), reason="the Vaswani collection is not beside the repo")
def test_the_service_chunks_the_live_documents_as_the_bench_points() -> None:
    docs, _, _ = load_vaswani()
    tier = Tier("t", 5_300, real_docs=300)
    real = real_chunks(docs, tier.real_docs)
    points = [embed_text(c.doc, c.text) for c in real]
    vectors = np.zeros((len(real), 384), np.float32)
    for chunks, _ in derived_points(real, vectors, tier.chunks - len(real)):
        points += [embed_text(c.doc, c.text) for c in chunks]
    documents = tier_documents(tier, docs)
    # What the Indexer embeds for each chunk of each document (app/ingest/pipeline.py).
    sent = [
        f"{d.title}\n{span.text}"
        for d in documents
        for span in chunk_spans(d.content or d.title, max_words=CHUNK_WORDS)
    ]
    assert sent == points
    assert len({d.key for d in documents}) == len(documents) == 300 + 5_300 - len(real)
    # The mixes longer than a chunk were cut to their first chunk, not sent whole.
    assert max(len(d.content.split()) for d in documents[300:]) <= CHUNK_WORDS
