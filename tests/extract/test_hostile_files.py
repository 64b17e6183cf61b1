"""Hostile and broken files through `POST /api/v1/files`: each gets its status and code, and
leaves nothing stored; the service goes on answering (a worker cut off is replaced)."""

import io
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from msoffcrypto.format.ooxml import OOXMLFile

from app.embeddings.dense import HashingEncoder
from tests.extract import legacy_samples as legacy
from tests.extract import samples
from tests.helpers import auth, envelope, running_app

MAX_FILE = 300_000
MAX_EXPANDED = 2**20
MAX_ENTRIES = 200


@pytest.fixture(scope="module")
def hostile_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with running_app(
        tmp_path_factory.mktemp("hostile") / "data",
        HashingEncoder(),
        max_file_bytes=MAX_FILE,
        max_archive_bytes=MAX_EXPANDED,
        max_archive_entries=MAX_ENTRIES,
        extract_timeout=20,
    ) as client:
        yield client


def upload(client: TestClient, data: bytes, doc_id: str) -> Any:
    metadata = {"doc_id": doc_id, "owner": "alice"}
    return client.post(
        "/api/v1/files?wait=true",
        files={"file": ("upload", data)},
        data={"metadata": json.dumps(metadata)},
        headers=auth(),
    )


def encrypted_docx() -> bytes:
    plain = io.BytesIO(samples.docx_file(["Secret plans."]))
    locked = io.BytesIO()
    OOXMLFile(plain).encrypt("secret", locked)
    return locked.getvalue()


def encrypted_odt() -> bytes:
    """An ODT whose manifest says its parts are encrypted (as LibreOffice writes one)."""
    manifest = (
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">'
        '<manifest:encryption-data manifest:checksum="x"/></manifest:file-entry>'
        "</manifest:manifest>"
    )
    return samples.zip_file(
        {
            "mimetype": b"application/vnd.oasis.opendocument.text",
            "META-INF/manifest.xml": manifest.encode(),
            "content.xml": bytes(range(256)) * 4,
        }
    )


def docx_with(extra: dict[str, bytes]) -> bytes:
    """A real DOCX with more entries added to its archive."""
    import zipfile

    buffer = io.BytesIO(samples.docx_file(["Innocent text."]))
    with zipfile.ZipFile(buffer, "a", zipfile.ZIP_DEFLATED) as archive:
        for name, data in extra.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def damaged_docx() -> bytes:
    return samples.zip_file(
        {"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<w:document><not-closed"}
    )


# (case, file, status, code, what the message says)
CASES: list[tuple[str, Callable[[], bytes], int, str, str]] = [
    ("too big", lambda: b"x" * (MAX_FILE + 1), 413, "payload_too_large", "larger than"),
    ("zip bomb", lambda: docx_with({"bomb.bin": bytes(2 * MAX_EXPANDED)}), 413,
     "payload_too_large", "expands to"),
    ("many entries", lambda: docx_with({f"e{i}": b"" for i in range(MAX_ENTRIES)}), 413,
     "payload_too_large", "entries"),
    ("encrypted pdf (AES-256)", lambda: samples.pdf(["Secret."], password="pw"), 422,
     "encrypted", "password"),
    ("encrypted pdf (RC4)", lambda: samples.pdf(["Secret."], "pw", "RC4-128"), 422,
     "encrypted", "password"),
    ("encrypted docx", encrypted_docx, 422, "encrypted", "password"),
    ("encrypted odt", encrypted_odt, 422, "encrypted", "password"),
    ("truncated pdf", lambda: samples.pdf(["Some text."])[:300], 422, "unreadable", "PDF"),
    ("damaged docx", damaged_docx, 422, "unreadable", "DOCX"),
    ("damaged zip", lambda: b"PK\x03\x04" + bytes(500), 422, "unreadable", "ZIP"),
    ("damaged png", lambda: b"\x89PNG\r\n\x1a\n" + bytes(300), 422, "unreadable", "PNG"),
    ("gif", lambda: b"GIF89a" + bytes(300), 422, "unsupported_format", "PDF"),
    ("damaged compound file", lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), 422,
     "unreadable", "compound"),
    ("excel 97", lambda: legacy.compound_file({"Workbook": bytes(5000)}), 422,
     "unsupported_format", "legacy"),
    ("other zip", lambda: samples.zip_file({"a.txt": b"hello"}), 422, "unsupported_format",
     "ZIP"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("make", "status", "code", "says"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_a_refused_file_gets_its_code_and_stores_nothing(
    hostile_client: TestClient,
    make: Callable[[], bytes],
    status: int,
    code: str,
    says: str,
) -> None:
    before = hostile_client.get("/api/v1/vector-sync/status", headers=auth()).json()
    message = envelope(upload(hostile_client, make(), "refused"), status, code)
    assert says in message
    missing = hostile_client.get("/api/v1/documents/file/refused", headers=auth())
    assert missing.status_code == 404
    after = hostile_client.get("/api/v1/vector-sync/status", headers=auth()).json()
    assert after == before


def test_an_upload_past_the_limit_is_cut_off_while_it_streams(hostile_client: TestClient) -> None:
    """No Content-Length: the body is counted as it arrives, and refused at the limit."""
    sent = 0

    def body() -> Iterator[bytes]:
        nonlocal sent
        for _ in range(100):
            sent += 64 * 1024
            yield bytes(64 * 1024)

    response = hostile_client.post(
        "/api/v1/files?doc_id=big&owner=alice", content=body(), headers=auth()
    )
    envelope(response, 413, "payload_too_large")
    assert hostile_client.get("/api/v1/documents/file/big", headers=auth()).status_code == 404


def test_a_scan_without_text_is_recorded_as_no_text(hostile_client: TestClient) -> None:
    metadata = {"doc_id": "scan", "owner": "alice", "title": "Scanned contract"}
    response = hostile_client.post(
        "/api/v1/files?wait=true",
        files={"file": ("scan.pdf", samples.pdf(["", "", ""]))},
        data={"metadata": json.dumps(metadata)},
        headers=auth(),
    )
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "no_text" and response.json()["characters"] == 0
    status = hostile_client.get("/api/v1/documents/file/scan", headers=auth()).json()
    assert status["status"] == "no_text"
    found = hostile_client.post(
        "/api/v1/search", json={"query": "scanned contract", "algorithm": "bm25"}, headers=auth()
    ).json()
    assert [hit["doc_id"] for hit in found["results"]] == ["scan"]  # by its title


def test_a_file_over_the_time_limit_is_cut_off_and_the_next_one_is_read(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    pages = [" ".join(f"Sentence {i} of page {n}." for i in range(60)) for n in range(1500)]
    slow = samples.pdf(pages)
    with running_app(
        tmp_path_factory.mktemp("slow") / "data", HashingEncoder(), extract_timeout=0.2
    ) as client:
        message = envelope(upload(client, slow, "slow"), 422, "unreadable")
        assert "time limit of 0.2 s" in message
        assert client.get("/api/v1/documents/file/slow", headers=auth()).status_code == 404
        quick = upload(client, b"A short note read after the cut.", "quick")
        assert quick.status_code == 200, quick.text
