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


def test_slides_and_sheets_are_chunked_alone_and_pdf_pages_may_be_spanned() -> None:
    from app.extract.model import Format, paged
    from app.ingest.chunking import chunk_pages

    pages = [" ".join(f"Page {n} sentence {i}." for i in range(40)) for n in range(1, 4)]
    deck = paged(Format.PPTX, pages)
    sealed = chunk_pages(deck.text, deck.page_starts, sealed=True, max_words=50)
    assert {c.page_number for c in sealed} == {1, 2, 3}
    for chunk in sealed:
        assert chunk.page_number == chunk.page_end
        assert chunk.text == deck.text[chunk.start : chunk.end]
        assert f"Page {chunk.page_number} " in chunk.text
        assert not any(f"Page {n} " in chunk.text for n in range(1, 4) if n != chunk.page_number)
    pdf = paged(Format.PDF, pages)
    spanning = chunk_pages(pdf.text, pdf.page_starts, sealed=False, max_words=50)
    assert any(c.page_end is not None and c.page_number is not None and c.page_end > c.page_number
               for c in spanning)  # fmt: skip
    first_of_page_3 = next(c for c in spanning if "Page 3 sentence 0." in c.text)
    assert first_of_page_3.page_end == 3
