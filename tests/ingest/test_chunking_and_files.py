"""Chunking, file reading and document validation: the pure parts of ingest."""

from pathlib import Path

import pytest

from app.errors import InvalidRequest
from app.extract.archive import ArchiveLimits
from app.extract.sandbox import Extractor
from app.ingest.chunking import chunk_text
from app.ingest.files import Refused, documents_from_files, find_files
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
    (root / "sub" / "c.pdf").write_bytes(b"%PDF-1.4 truncated")
    (root / "skip.bin").write_bytes(b"\x00\x01")
    files = find_files([root])
    assert [f.file_path for f in files] == ["/notes/a.md", "/notes/sub/b.html", "/notes/sub/c.pdf"]
    extractor = Extractor(1, 60, ArchiveLimits())
    try:
        found = list(
            documents_from_files(files, "erin", extractor, lambda f: f.path.suffix == ".md")
        )
    finally:
        extractor.close()
    assert found[0] is None  # current: not read again
    html, broken = found[1], found[2]
    assert not isinstance(html, Refused) and html is not None
    assert html.owner == "erin" and html.mime_type == "text/html" and html.doc_type == "file"
    assert "Beta & text" in html.content and "x()" not in html.content
    assert isinstance(broken, Refused) and broken.code == "unreadable"


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
