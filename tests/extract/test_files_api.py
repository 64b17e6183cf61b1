"""`POST /api/v1/files` on the real embedded engine with the real model: every format uploaded,
found by a sentence of its page 3 (slide 3, sheet 3) with that page on the result; the
upload's two shapes, its answers, and what the Astrolabe app reads."""

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.embeddings.dense import MiniLMEncoder
from tests.extract import samples
from tests.helpers import auth, envelope, running_app

PAGE_3 = "The lighthouse keeper logged a northern gale and a broken lantern."
OTHER = [
    "Quarterly revenue grew in every region of the company.",
    "The kitchen menu changes with the seasons and the market.",
    "Bicycle lanes were painted along the river last spring.",
]
TEXTS = [OTHER[0], OTHER[1], PAGE_3, OTHER[2]]


def _page_of_prose(number: int, middle: str) -> str:
    """About 400 words, as a PDF page holds: `middle` halfway down."""
    filler = [f"Paragraph {number}.{i} records the routine of an ordinary day." for i in range(40)]
    return " ".join([*filler[:20], middle, *filler[20:]])


PDF_PAGES = [_page_of_prose(n, text) for n, text in enumerate(TEXTS, 1)]

# format -> (file bytes, page_count, page of PAGE_3)
FILES: dict[str, tuple[Callable[[], bytes], int | None, int | None]] = {
    "pdf": (lambda: samples.pdf(PDF_PAGES), 4, 3),
    "pptx": (lambda: samples.pptx_file(TEXTS), 4, 3),
    "odp": (lambda: samples.odp_file(TEXTS), 4, 3),
    "xlsx": (lambda: samples.xlsx_file([[[t]] for t in TEXTS]), 4, 3),
    "ods": (lambda: samples.ods_file([[t] for t in TEXTS]), 4, 3),
    "docx": (lambda: samples.docx_file(TEXTS), None, None),
    "odt": (lambda: samples.odt_file(TEXTS), None, None),
    "html": (lambda: samples.html_file(TEXTS), None, None),
    "markdown": (lambda: ("# Notes\n\n" + "\n\n".join(TEXTS)).encode(), None, None),
    "text": (lambda: "\n\n".join(TEXTS).encode(), None, None),
    "eml": (lambda: samples.eml_file("Notes", "\n\n".join(TEXTS)), None, None),
}
NAMES = {"markdown": "notes.md", "text": "notes.txt"}


def upload(
    client: TestClient, data: bytes, metadata: dict[str, Any], name: str = "upload", **query: Any
) -> Any:
    return client.post(
        "/api/v1/files",
        params=query,
        files={"file": (name, data)},
        data={"metadata": json.dumps(metadata)},
        headers=auth(),
    )


@pytest.fixture(scope="module")
def files_client(
    tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEncoder
) -> Iterator[TestClient]:
    """Every format uploaded once (doc_id = its format), with a link template for files."""
    templates = {"file": "https://cloud.example/f/{doc_id}?path={file_path}"}
    with running_app(
        tmp_path_factory.mktemp("files") / "data", minilm, link_templates=templates
    ) as client:
        for format, (make, _, _) in FILES.items():
            metadata = {"doc_id": format, "owner": "alice", "file_path": f"/Docs/{format} file"}
            response = upload(client, make(), metadata, NAMES.get(format, "upload"), wait="true")
            assert response.status_code == 200, response.text
        yield client


@pytest.mark.parametrize("format", sorted(FILES))
def test_a_sentence_of_page_3_is_found_on_page_3(files_client: TestClient, format: str) -> None:
    _, page_count, page = FILES[format]
    body = {"query": "lighthouse keeper northern gale", "limit": 1, "doc_types": ["file"]}
    body |= {"path_prefixes": [f"/Docs/{format} file"]}
    found = files_client.post("/api/v1/search", json=body, headers=auth()).json()["results"]
    assert found, format
    hit = found[0]
    assert hit["doc_id"] == format and "northern gale" in " ".join(hit["excerpt"].split())
    assert (hit["page_number"], hit["page_count"]) == (page, page_count)
    assert hit["url"] == f"https://cloud.example/f/{format}?path=/Docs/{format}%20file"


def test_the_best_hit_overall_is_a_page_3(files_client: TestClient) -> None:
    body = {"query": "lighthouse keeper northern gale", "limit": 20, "granularity": "document"}
    found = files_client.post("/api/v1/search", json=body, headers=auth()).json()["results"]
    assert {hit["doc_id"] for hit in found} == set(FILES)
    paged = [hit for hit in found if FILES[hit["doc_id"]][2] is not None]
    assert {hit["page_number"] for hit in paged} == {3}


def test_chunk_context_answers_with_the_page(files_client: TestClient) -> None:
    body = {"query": "bicycle lanes river", "limit": 1, "path_prefixes": ["/Docs/pptx file"]}
    hit = files_client.post("/api/v1/search", json=body, headers=auth()).json()["results"][0]
    params = {
        "doc_type": "file",
        "doc_id": "pptx",
        "start": hit["chunk_start_offset"],
        "end": hit["chunk_end_offset"],
    }
    context = files_client.get("/api/v1/chunk-context", params=params, headers=auth()).json()
    assert context["page_number"] == hit["page_number"] == 4


def test_a_document_status_says_pages_and_format(files_client: TestClient) -> None:
    status = files_client.get("/api/v1/documents/file/pdf", headers=auth()).json()
    assert status["status"] == "indexed" and status["page_count"] == 4
    assert status["mime_type"] == "application/pdf"
    assert status["title"] == "upload"  # no title sent, none in the file: its name


def test_mcp_hits_carry_the_link_and_page(files_client: TestClient) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "search",
            "arguments": {"query": "lighthouse keeper gale", "path_prefixes": ["/Docs/pdf file"]},
        },
    }
    headers = auth() | {"Accept": "application/json, text/event-stream"}
    answer = files_client.post("/mcp", json=call, headers=headers).json()["result"]
    hit = answer["structuredContent"]["results"][0]
    assert hit["url"] == "https://cloud.example/f/pdf?path=/Docs/pdf%20file"
    assert hit["page_number"] == 3
    text = answer["content"][0]["text"]
    assert "page 3 of 4" in text and hit["url"] in text


@pytest.fixture
def plain_client(tmp_path: Path) -> Iterator[TestClient]:
    from app.embeddings.dense import HashingEncoder

    with running_app(tmp_path / "data", HashingEncoder()) as client:
        yield client


def test_the_raw_body_with_metadata_in_the_query(plain_client: TestClient) -> None:
    response = plain_client.post(
        "/api/v1/files",
        params={"doc_id": "r1", "owner": "alice", "tags": ["a", "b"], "wait": "true"},
        content=samples.pdf(["One page of raw upload."]),
        headers=auth() | {"Content-Disposition": 'attachment; filename="raw report.pdf"'},
    )
    assert response.status_code == 200, response.text
    assert response.json() | {"chunks": 0} == {
        "indexed": 1,
        "chunks": 0,
        "doc_type": "file",
        "doc_id": "r1",
        "format": "pdf",
        "mime_type": "application/pdf",
        "page_count": 1,
        "characters": len("One page of raw upload."),
        "status": "indexed",
    }
    status = plain_client.get("/api/v1/documents/file/r1", headers=auth()).json()
    assert status["title"] == "raw report" and status["tags"] == ["a", "b"]


def test_a_202_then_searchable(plain_client: TestClient) -> None:
    response = upload(plain_client, b"Deferred text upload.", {"doc_id": "d1", "owner": "alice"})
    assert response.status_code == 202
    assert response.json()["accepted"] == 1 and response.json()["status"] == "pending"
    sync = plain_client.get("/api/v1/vector-sync/status", headers=auth()).json()
    assert set(sync) >= {"status", "indexed_documents", "indexed_chunks", "pending_documents"}


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"owner": "alice"}, "metadata.doc_id"),
        ({"doc_id": "x", "owner": "alice", "url": "javascript:alert(1)"}, "metadata.url"),
        ({"doc_id": "x", "owner": "alice", "content": "text"}, "metadata.content"),
        ({"doc_id": "x", "owner": "alice", "file_path": "relative/a.pdf"}, "metadata.file_path"),
    ],
)
def test_bad_metadata_is_a_400_naming_the_field(
    plain_client: TestClient, metadata: dict[str, Any], field: str
) -> None:
    envelope(upload(plain_client, b"some text", metadata), 400, "invalid_request", field)


def test_bad_query_metadata_and_missing_parts_are_400s(plain_client: TestClient) -> None:
    raw = plain_client.post(
        "/api/v1/files", params={"doc_id": "x", "owner": "a", "titel": "t"}, content=b"x",
        headers=auth(),
    )  # fmt: skip
    envelope(raw, 400, "invalid_request", "titel")
    twice = plain_client.post(
        "/api/v1/files", params=(("doc_id", "x"), ("owner", "a"), ("owner", "b")), content=b"x",
        headers=auth(),
    )  # fmt: skip
    envelope(twice, 400, "invalid_request", "owner")  # the last owner would silently win
    no_file = plain_client.post(
        "/api/v1/files", data={"metadata": '{"doc_id": "x", "owner": "a"}'},
        files={"other": ("a", b"b")}, headers=auth(),
    )  # fmt: skip
    envelope(no_file, 400, "invalid_request", "other")
    no_metadata = plain_client.post(
        "/api/v1/files", files={"file": ("a.txt", b"text")}, headers=auth()
    )
    envelope(no_metadata, 400, "invalid_request", "metadata")
    not_json = plain_client.post(
        "/api/v1/files", files={"file": ("a.txt", b"t")}, data={"metadata": "{no"},
        headers=auth(),
    )  # fmt: skip
    envelope(not_json, 400, "invalid_request", "metadata")
    empty = plain_client.post("/api/v1/files?doc_id=x&owner=a", content=b"", headers=auth())
    envelope(empty, 400, "invalid_request", "file")


def test_uploads_need_scope_index(plain_client: TestClient) -> None:
    response = plain_client.post(
        "/api/v1/files?doc_id=x&owner=a", content=b"text", headers=auth(scope="search")
    )
    envelope(response, 403, "forbidden")


def test_a_javascript_url_on_a_document_is_a_400(plain_client: TestClient) -> None:
    for url in (
        "javascript:alert(1)",
        "data:text/html,x",
        "ftp://host/x",
        "https://",
        "http://a b",
    ):
        document = {"doc_type": "note", "doc_id": "1", "owner": "alice", "url": url}
        response = plain_client.post(
            "/api/v1/documents", json={"documents": [document]}, headers=auth()
        )
        assert response.status_code == 400, url
        assert response.json()["error"]["field"] == "documents[0].url"


def test_a_documents_own_url_wins_over_the_template(tmp_path: Path) -> None:
    from app.embeddings.dense import HashingEncoder

    templates = {"note": "https://notes.example/{doc_id}"}
    with running_app(tmp_path / "data", HashingEncoder(), link_templates=templates) as client:
        own = {"doc_type": "note", "doc_id": "a/b", "owner": "alice", "content": "tea kettle"}
        plain = own | {"doc_id": "c d", "url": "https://elsewhere.example/x"}
        deck = own | {"doc_type": "deck_card", "doc_id": "9"}
        client.post(
            "/api/v1/documents?wait=true", json={"documents": [own, plain, deck]}, headers=auth()
        )
        found = client.post("/api/v1/search", json={"query": ""}, headers=auth()).json()
        urls = {hit["doc_id"]: hit["url"] for hit in found["results"]}
        assert urls == {
            "a/b": "https://notes.example/a%2Fb",
            "c d": "https://elsewhere.example/x",
            "9": None,  # no template for deck cards
        }


def test_a_multipart_upload_refuses_metadata_in_the_query(plain_client: TestClient) -> None:
    response = upload(plain_client, b"text", {"doc_id": "q", "owner": "alice"}, url="https://x.y")
    envelope(response, 400, "invalid_request", "url")
    assert plain_client.get("/api/v1/documents/file/q", headers=auth()).status_code == 404
