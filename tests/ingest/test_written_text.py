"""Every word findable as it was written: ligatures, line-end hyphens, the page of the match,
titles as a person reads them, and no work twice (issue 36)."""

import io
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pypdf import PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    NumberObject,
)

from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.documents import Document
from app.ingest.pipeline import EMBED_SLICE, Indexer, chunk_point_id
from app.store import fields
from app.store.open import Use, open_store
from app.written import normalize, normalize_pages
from tests.extract import samples
from tests.extract.test_files_api import upload as upload_file
from tests.helpers import auth, running_app, search

# Helvetica with two bytes mapped to the ligature glyphs a browser's print writes: a text layer
# that holds U+FB01 "ﬁ" and U+FB03 "ﬃ" (the glyph names map to them).
LIGATURE_FONT = DictionaryObject(
    {
        NameObject("/Type"): NameObject("/Font"),
        NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"),
        NameObject("/Encoding"): DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Encoding"),
                NameObject("/BaseEncoding"): NameObject("/WinAnsiEncoding"),
                NameObject("/Differences"): ArrayObject(
                    [NumberObject(128), NameObject("/fi"), NameObject("/ffi")]
                ),
            }
        ),
    }
)


def pdf_lines(pages: list[list[str]]) -> bytes:
    """A PDF of these lines per page ("\\x80" is the fi ligature, "\\x81" ffi)."""
    writer = PdfWriter()
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): LIGATURE_FONT})}
        )
        shown = " ".join(f"({line}) Tj T*" for line in lines)
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 10 Tf 13 TL 40 750 Td {shown} ET".encode("latin-1"))
        page.replace_contents(stream.flate_encode())
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def upload(client: TestClient, data: bytes, doc_id: str, name: str, **query: Any) -> Any:
    return upload_file(client, data, {"doc_id": doc_id, "owner": "alice"}, name, **query)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[TestClient]:
    with running_app(tmp_path / "data", HashingEncoder()) as client:
        yield client


# --- one normalisation ------------------------------------------------------------------------


def test_ligatures_full_width_and_invisible_characters_fold() -> None:
    assert normalize("the ﬁle is deﬁnitive, oﬃcially") == "the file is definitive, officially"
    assert normalize("\uff21\uff22\uff23\uff11\uff12\uff13") == "ABC123"  # full width
    assert normalize("in\u00advisible zero\u200bwidth\ufeff") == "invisible zerowidth"
    assert normalize("hyphen\u00ad\nated") == "hyphenated"


def test_line_end_hyphens_join_words_but_keep_compounds() -> None:
    assert normalize("it was cre-\nated by declara-\n  tions") == "it was created by declarations"
    assert normalize("a 64-\nbit build, Jean-\nPaul") == "a 64-\nbit build, Jean-\nPaul"
    compound = "floating-point is used; the floating-\npoint unit"
    assert normalize(compound) == "floating-point is used; the floating-point unit"
    joined = "the identifier is long; an iden-\ntifier"
    assert normalize(joined) == "the identifier is long; an identifier"


def test_pages_keep_their_starts_when_their_text_changes_length() -> None:
    text = "ﬁrst page\n\nsecond ﬃx page\n\nthird"
    starts = (0, text.index("second"), text.index("third"))
    normal, moved = normalize_pages(text, starts)
    assert [normal[s : s + 6] for s in moved] == ["first ", "second", "third"]


def test_a_ligature_in_a_pdf_text_layer_is_found_by_the_plain_word(app: TestClient) -> None:
    data = pdf_lines([["the de\x80nitive guide, o\x81cially reviewed"]])
    assert upload(app, data, "lig", "manual.pdf", wait="true").status_code == 200
    for query in ("definitive", "officially", "ﬁnitive de\ufb01nitive"):
        hits = search(app, query=query, algorithm="bm25")["results"]
        assert [h["doc_id"] for h in hits] == ["lig"], query
    assert "definitive" in hits[0]["excerpt"]


def test_a_word_hyphenated_at_a_line_end_in_a_pdf_is_found_whole(app: TestClient) -> None:
    data = pdf_lines([["The index was cre-", "ated from the declara-", "tions of the schema."]])
    assert upload(app, data, "hyph", "schema.pdf", wait="true").status_code == 200
    for query in ("created", "declarations"):
        assert [h["doc_id"] for h in search(app, query=query, algorithm="bm25")["results"]] == [
            "hyph"
        ]


def test_a_document_sent_as_text_and_a_query_are_normalised_alike(app: TestClient) -> None:
    body = {"documents": [{"doc_type": "note", "doc_id": "n", "owner": "alice",
                           "content": "a plain file about suffixes"}]}  # fmt: skip
    assert app.post("/api/v1/documents?wait=true", json=body, headers=auth()).status_code == 200
    hits = search(app, query="suﬃxes ﬁle", algorithm="bm25")["results"]
    assert [h["doc_id"] for h in hits] == ["n"]


# --- the page of the match ----------------------------------------------------------------------


def test_a_hit_names_the_page_of_its_matching_words(app: TestClient) -> None:
    page_1 = [f"Line {i} of the opening section about harbours and ships." for i in range(9)]
    page_2 = ["The zeppelin appears only on the second page."]
    page_3 = ["A third page about something else entirely."]
    data = pdf_lines([page_1, page_2, page_3])
    assert upload(app, data, "pages", "report.pdf", wait="true").status_code == 200
    (hit,) = search(app, query="zeppelin", algorithm="bm25")["results"]
    assert (hit["page_start"], hit["page_end"]) == (1, 3)  # the chunk crosses two breaks
    assert hit["page_number"] == 2
    (opening,) = [h for h in search(app, query="harbours", algorithm="bm25")["results"]]
    assert opening["page_number"] == 1


# --- titles ---------------------------------------------------------------------------------------


def test_a_setext_heading_titles_a_markdown_file(app: TestClient) -> None:
    readme = (
        b"Astrolabe Search\n================\n\nIntro text.\n\nInstalling\n----------\n\nRun it."
    )
    assert upload(app, readme, "readme", "README.md", wait="true").status_code == 200
    (hit,) = search(app, query="intro", algorithm="bm25")["results"]
    assert hit["title"] == "Astrolabe Search"


@pytest.mark.parametrize("placeholder", ["Untitled", "[no title]", "  "])
def test_a_placeholder_title_falls_back_to_the_file_name(app: TestClient, placeholder: str) -> None:
    data = samples.docx_file(["the quarterly lantern report"], title=placeholder)
    assert upload(app, data, "doc", "q3_lantern_report.docx", wait="true").status_code == 200
    (hit,) = search(app, query="lantern", algorithm="bm25")["results"]
    assert hit["title"] == "q3 lantern report"


# --- no work twice ------------------------------------------------------------------------------


def test_the_same_file_sent_again_is_acknowledged_without_extraction(
    app: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = cast(FastAPI, app.app).state.astrolabe.require_services()
    extractor = services.ingest.extractor
    real, calls = extractor.extract, []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(extractor, "extract", counted)
    data = samples.pdf(["first page words", "second page words"])
    first = upload(app, data, "twice", "twice.pdf", wait="true").json()
    again = upload(app, data, "twice", "twice.pdf", wait="true").json()
    assert len(calls) == 1
    assert again == first
    changed = upload(app, samples.pdf(["other words"]), "twice", "twice.pdf", wait="true")
    assert changed.status_code == 200 and len(calls) == 2


def test_the_same_document_sent_again_is_not_embedded_again(app: TestClient) -> None:
    services = cast(FastAPI, app.app).state.astrolabe.require_services()
    note = {"doc_type": "note", "doc_id": "same", "owner": "alice", "content": "unchanged words"}
    body = {"documents": [note | {"modified_at": 1_700_000_000}]}
    first = app.post("/api/v1/documents?wait=true", json=body, headers=auth()).json()
    revision = _revision(services.ingest.indexer, "note:same")
    again = app.post("/api/v1/documents?wait=true", json=body, headers=auth()).json()
    assert again == first and _revision(services.ingest.indexer, "note:same") == revision
    body["documents"][0]["title"] = "now with a title"
    app.post("/api/v1/documents?wait=true", json=body, headers=auth())
    assert _revision(services.ingest.indexer, "note:same") != revision


def _revision(indexer: Indexer, key: str) -> int:
    (hit,) = indexer.store.retrieve([chunk_point_id(key, 0)])
    return int(hit.payload[fields.REVISION])


# --- progress -------------------------------------------------------------------------------------


class GatedEncoder(HashingEncoder):
    """The hashing encoder that waits at its second call until the test opens the gate."""

    def __init__(self) -> None:
        super().__init__()
        self.gate, self.calls = threading.Event(), 0

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == 2:
            self.gate.wait(30)
        return super().encode(texts)


def test_a_long_document_shows_how_far_its_embedding_got(tmp_path: Path) -> None:
    encoder = GatedEncoder()
    store = open_store(Settings(data_dir=tmp_path / "data"), Use.IN_PROCESS)
    try:
        indexer = Indexer(store, encoder, Bm25Encoder())
        sentences = " ".join(f"Sentence number {i} goes on for a while." for i in range(4000))
        document = Document("note", "long", "", sentences, "alice", 1, None, (), None, None, ())
        (job,) = indexer.accept([document])
        worker = threading.Thread(target=indexer.index, args=([job],))
        worker.start()
        deadline = time.monotonic() + 30
        while encoder.calls < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        status = indexer.status("note:long")
        assert status is not None and status.progress is not None
        assert status.progress.stage == "embedding"
        assert status.progress.chunks_embedded == EMBED_SLICE
        assert (
            status.progress.chunks_total is not None and status.progress.chunks_total > EMBED_SLICE
        )
        encoder.gate.set()
        worker.join(30)
        finished = indexer.status("note:long")
        assert finished is not None and finished.status == "indexed" and finished.progress is None
    finally:
        encoder.gate.set()
        store.close()


def test_the_ligature_words_of_a_browser_printed_pdf_are_found(app: TestClient) -> None:
    data = (Path(__file__).parent.parent / "data" / "chromium-ligatures.pdf").read_bytes()
    assert upload(app, data, "printed", "guide.pdf", wait="true").status_code == 200
    for word in PRINTED_WORDS:
        hits = search(app, query=word, algorithm="bm25")["results"]
        assert [h["doc_id"] for h in hits] == ["printed"], word


PRINTED_WORDS = ("definitive", "file", "officially", "reflecting", "suffix", "workflow", "offline")
