"""Chunking, file reading and document validation: the pure parts of ingest."""

from pathlib import Path

import pytest

from app.errors import InvalidRequest
from app.ingest.chunking import chunk_text
from app.ingest.files import documents_from_paths
from app.ingest.models import validate_batch


def test_chunks_respect_the_word_budget_and_sentence_boundaries() -> None:
    text = " ".join(f"Sentence {i} has exactly six words." for i in range(100))
    chunks = chunk_text(text, max_words=60, overlap_words=6)
    assert len(chunks) > 5
    assert all(len(c.split()) <= 60 for c in chunks)
    assert all(c.endswith(".") for c in chunks)
    assert chunks[1].split()[:6] == chunks[0].split()[-6:]  # overlap carried over


def test_a_giant_sentence_is_split_and_empty_text_is_one_empty_chunk() -> None:
    assert [len(c.split()) for c in chunk_text("word " * 250, max_words=100, overlap_words=0)] == [
        100,
        100,
        50,
    ]
    assert chunk_text("   ") == [""]


def test_documents_from_a_folder(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# Alpha title\n\nSome markdown body.")
    (root / "sub" / "b.html").write_text("<html><script>x()</script><p>Beta &amp; text</p></html>")
    (root / "skip.bin").write_bytes(b"\x00\x01")
    found = sorted(documents_from_paths([root], owner="erin"), key=lambda d: d["file_path"])
    assert [d["file_path"] for d in found] == ["/notes/a.md", "/notes/sub/b.html"]
    assert found[0]["title"] == "Alpha title" and found[0]["mime_type"] == "text/markdown"
    assert "Beta & text" in found[1]["content"] and "x()" not in found[1]["content"]
    assert validate_batch(found)[0].owner == "erin"


def test_a_batch_is_normalized_and_validated_whole() -> None:
    raw = {
        "doc_type": "file",
        "doc_id": "1",
        "owner": "a",
        "file_path": "/A//b/",
        "tags": [" x ", "x"],
    }
    documents = validate_batch([raw, raw | {"title": "second"}])
    assert documents[0].file_path == "/A/b"
    assert documents[0].tags == ("x",)
    with pytest.raises(InvalidRequest) as caught:
        validate_batch([raw, raw | {"modified_at": -1}])
    assert caught.value.field == "documents[1].modified_at"
