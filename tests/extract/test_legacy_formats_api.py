"""`POST /api/v1/files` with the older and other formats, on the real embedded engine with the
real model: each found by the sentence of its page 3 (an EPUB's chapter 3 says page 3; the
unpaged formats have no page), a mail's attachment found in the mail; and their hostile files
refused with their codes, nothing stored."""

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.embeddings.dense import HashingEncoder, MiniLMEncoder
from tests.extract import legacy_samples as legacy
from tests.extract import samples
from tests.extract.test_files_api import TEXTS, _page_of_prose
from tests.helpers import auth, envelope, running_app


def _table() -> bytes:
    rows = ["ship;master;log", *(f"Ship {n};Master {n};{text}" for n, text in enumerate(TEXTS))]
    return "\n".join(rows).encode()


def _mail_with_pdf() -> bytes:
    message = legacy.mail("Board papers", "The papers for the board are attached.")
    pages = [_page_of_prose(n, text) for n, text in enumerate(TEXTS, 1)]
    message.add_attachment(samples.pdf(pages), "application", "pdf", filename="logbook.pdf")
    return bytes(message)


def _msg_with_docx() -> bytes:
    return legacy.msg_file(
        "Logbook",
        "The logbook is attached.",
        attachments=[("logbook.docx", samples.docx_file(TEXTS), "application/octet-stream")],
    )


# format -> (file bytes, name sent, page_count, page of PAGE_3, MIME type)
FILES: dict[str, tuple[Callable[[], bytes], str, int | None, int | None, str]] = {
    "epub": (lambda: legacy.epub_file([_page_of_prose(n, t) for n, t in enumerate(TEXTS, 1)]),
             "book.epub", 4, 3, "application/epub+zip"),
    "doc": (lambda: (legacy.DATA / "memo.doc").read_bytes(), "memo.doc", None, None,
            "application/msword"),
    "rtf": (lambda: legacy.rtf_file(TEXTS), "memo.rtf", None, None, "application/rtf"),
    "msg": (lambda: legacy.msg_file("Logbook", "\n\n".join(TEXTS)), "mail.msg", None, None,
            "application/vnd.ms-outlook"),
    "csv": (_table, "ships.csv", None, None, "text/csv"),
    "tsv": (lambda: _table().replace(b";", b"\t"), "upload", None, None,
            "text/tab-separated-values"),
    "eml attachment": (_mail_with_pdf, "papers.eml", None, None, "message/rfc822"),
    "msg attachment": (_msg_with_docx, "logbook.msg", None, None, "application/vnd.ms-outlook"),
}  # fmt: skip


def upload(client: TestClient, data: bytes, doc_id: str, name: str = "upload") -> Any:
    metadata = {"doc_id": doc_id, "owner": "alice", "file_path": f"/Older/{doc_id}"}
    return client.post(
        "/api/v1/files?wait=true",
        files={"file": (name, data)},
        data={"metadata": json.dumps(metadata)},
        headers=auth(),
    )


@pytest.fixture(scope="module")
def older_client(
    tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEncoder
) -> Iterator[TestClient]:
    with running_app(tmp_path_factory.mktemp("older") / "data", minilm) as client:
        for format, (make, name, _, _, _) in FILES.items():
            response = upload(client, make(), format.replace(" ", "-"), name)
            assert response.status_code == 200, response.text
        yield client


@pytest.mark.parametrize("format", sorted(FILES))
def test_a_sentence_of_page_3_is_found_with_its_page(older_client: TestClient, format: str) -> None:
    _, _, page_count, page, mime_type = FILES[format]
    doc_id = format.replace(" ", "-")
    body = {"query": "lighthouse keeper northern gale", "limit": 1}
    body |= {"path_prefixes": [f"/Older/{doc_id}"]}
    found = older_client.post("/api/v1/search", json=body, headers=auth()).json()["results"]
    assert found, format
    hit = found[0]
    assert hit["doc_id"] == doc_id and "northern gale" in " ".join(hit["excerpt"].split())
    assert (hit["page_number"], hit["page_count"]) == (page, page_count)
    status = older_client.get(f"/api/v1/documents/file/{doc_id}", headers=auth()).json()
    assert status["status"] == "indexed" and status["mime_type"] == mime_type
    assert status["extraction"] == "text"


def test_titles_come_from_the_files(older_client: TestClient) -> None:
    titles = {
        doc_id: older_client.get(f"/api/v1/documents/file/{doc_id}", headers=auth()).json()["title"]
        for doc_id in ("doc", "rtf", "epub", "msg", "eml-attachment", "csv")
    }
    assert titles == {
        "doc": "Harbour memo",
        "rtf": "Harbour memo",
        "epub": "The harbour book",
        "msg": "Logbook",
        "eml-attachment": "Board papers",
        "csv": "ships",  # no title of its own: its name
    }


@pytest.fixture(scope="module")
def hostile_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with running_app(
        tmp_path_factory.mktemp("older-hostile") / "data",
        HashingEncoder(),
        max_file_bytes=2_000_000,
        max_archive_bytes=2**20,
        max_archive_entries=200,
        extract_timeout=30,
    ) as client:
        yield client


# (case, file, status, code, what the message says)
CASES: list[tuple[str, Callable[[], bytes], int, str, str]] = [
    ("encrypted doc", legacy.encrypted_doc, 422, "encrypted", "password"),
    ("word 95 doc", legacy.word95_doc, 422, "unsupported_format", "Word 95"),
    ("damaged doc", legacy.doc_with_piece_table_outside, 422, "unreadable", "piece table"),
    ("excel 97", lambda: legacy.compound_file({"Workbook": bytes(5000)}), 422,
     "unsupported_format", ".xls"),
    ("epub bomb", lambda: legacy.epub_with({"bomb.bin": bytes(3 * 2**20)}), 413,
     "payload_too_large", "expands to"),
    ("epub with drm", lambda: legacy.epub_with({"META-INF/encryption.xml": (
        b'<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"'
        b' xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:CipherData>'
        b'<enc:CipherReference URI="EPUB/text/ch1.xhtml"/></enc:CipherData></enc:EncryptedData>'
        b"</encryption>")}), 422, "encrypted", "DRM"),
    ("damaged epub", lambda: legacy.epub_with({"META-INF/container.xml": b"<x"}), 422,
     "unreadable", "EPUB"),
    ("encrypted msg", lambda: legacy.msg_file("S", "x", message_class="IPM.Note.SMIME"), 422,
     "encrypted", "S/MIME"),
    ("truncated msg", lambda: legacy.msg_file("S", "x")[:4000], 422, "unreadable",
     "compound"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("make", "status", "code", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_refused_older_file_gets_its_code_and_stores_nothing(
    hostile_client: TestClient, make: Callable[[], bytes], status: int, code: str, says: str
) -> None:
    message = envelope(upload(hostile_client, make(), "refused"), status, code)
    assert says in message
    assert hostile_client.get("/api/v1/documents/file/refused", headers=auth()).status_code == 404


def test_a_mail_with_a_damaged_or_hostile_attachment_is_still_indexed(
    hostile_client: TestClient,
) -> None:
    message = legacy.mail("Papers with a bad one", "The body about the harbour crane.")
    for name, data in (
        ("broken.pdf", samples.pdf(["Some text."])[:300]),
        ("bomb.epub", legacy.epub_with({"bomb.bin": bytes(3 * 2**20)})),
        ("locked.doc", legacy.encrypted_doc()),
    ):
        message.add_attachment(data, "application", "octet-stream", filename=name)
    response = upload(hostile_client, bytes(message), "bad-attachments")
    assert response.status_code == 200, response.text
    found = hostile_client.post(
        "/api/v1/search", json={"query": "harbour crane", "algorithm": "bm25"}, headers=auth()
    ).json()["results"]
    assert [hit["doc_id"] for hit in found] == ["bad-attachments"]


def test_a_mails_attachments_share_its_time_limit(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The attachments are read within the mail's own request: an attachment that takes past
    SEARCH_EXTRACT_TIMEOUT cuts the mail off as a file that slow would be."""
    pages = [" ".join(f"Sentence {i} of page {n}." for i in range(60)) for n in range(1500)]
    message = legacy.mail("A heavy attachment", "The body is short.")
    message.add_attachment(samples.pdf(pages), "application", "pdf", filename="heavy.pdf")
    with running_app(
        tmp_path_factory.mktemp("slow-mail") / "data", HashingEncoder(), extract_timeout=0.2
    ) as client:
        message_text = envelope(upload(client, bytes(message), "slow"), 422, "unreadable")
        assert "time limit of 0.2 s" in message_text
        assert client.get("/api/v1/documents/file/slow", headers=auth()).status_code == 404
        light = legacy.mail("A light one", "Read after the cut.")
        assert upload(client, bytes(light), "light").status_code == 200
