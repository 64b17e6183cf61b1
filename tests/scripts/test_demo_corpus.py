"""The bundled demo corpus is exactly what its generator writes: edit the generator, then
regenerate (`python -m scripts.make_demo_corpus`), never the file by hand."""

import json

from app.ingest.demo import DEMO_CORPUS
from app.ingest.models import MAX_BATCH, validate_batch
from scripts.make_demo_corpus import DEFAULT_OUTPUT, build_drafts, serialize, validate


def test_the_committed_corpus_is_the_generators_output() -> None:
    drafts = build_drafts()
    validate(drafts)
    assert DEFAULT_OUTPUT == DEMO_CORPUS
    assert DEMO_CORPUS.read_text(encoding="utf-8") == serialize(drafts), (
        "app/demo/corpus.jsonl drifted from scripts/make_demo_corpus.py: regenerate it"
    )


def test_every_demo_document_passes_the_ingest_rules() -> None:
    raw = [json.loads(line) for line in DEMO_CORPUS.read_text(encoding="utf-8").splitlines()]
    documents = [
        document
        for start in range(0, len(raw), MAX_BATCH)
        for document in validate_batch(raw[start : start + MAX_BATCH])
    ]
    assert len({document.key for document in documents}) == len(raw) == 300
