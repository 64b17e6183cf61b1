"""The bundled demo corpus (`astrolabe-search demo`): 300 documents, every one readable by group
`demo`, which the dev token's user is in (`scripts/make_demo_corpus.py` writes it)."""

import json
from pathlib import Path
from typing import Any

DEMO_CORPUS = Path(__file__).resolve().parent.parent / "demo" / "corpus.jsonl"


def demo_documents() -> list[dict[str, Any]]:
    """The corpus's documents as sent (one JSON object a line)."""
    lines = DEMO_CORPUS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]
