"""The one error envelope on the real app: 400 naming the field (unknown fields too), 404, 405,
413; no input gets a 500."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.embeddings.dense import HashingEncoder
from tests.helpers import auth, doc, envelope, running_app

SEARCH = "/api/v1/search"
DOCUMENT = "/api/v1/documents/note/1"


# --- 400 ------------------------------------------------------------------------------------

BAD_SEARCH_BODIES: list[tuple[str, Any]] = [
    ("limit", 0),
    ("limit", 101),
    ("limit", "10"),
    ("limit", True),
    ("limit", 2.5),
    ("offset", -1),
    ("offset", 10_001),
    ("offset", "1"),
    ("algorithm", "x"),
    ("algorithm", "HYBRID"),
    ("fusion", "x"),
    ("granularity", "x"),
    ("query", "q" * 10_001),
    ("query", 42),
    ("score_threshold", -1),
    ("score_threshold", "0.5"),
    ("doc_types", "file"),
    ("doc_types", [1]),
    ("tags", "urgent"),
    ("include_facets", "yes"),
    ("include_facets", 1),
]


@pytest.mark.parametrize(
    ("field", "value"),
    BAD_SEARCH_BODIES,
    ids=[f"{f}={str(v)[:12]}" for f, v in BAD_SEARCH_BODIES],
)
def test_invalid_search_field_is_400_naming_it(
    app_client: TestClient, field: str, value: Any
) -> None:
    response = app_client.post(SEARCH, json={field: value}, headers=auth())
    named = f"{field}[0]" if isinstance(value, list) else field  # the offending list item
    message = envelope(response, 400, "invalid_request", named)
    assert named in message


def test_search_limits_at_the_bounds_are_accepted(app_client: TestClient) -> None:
    body = {"query": "q" * 10_000, "limit": 100, "offset": 10_000, "score_threshold": 0}
    response = app_client.post(SEARCH, json=body, headers=auth())
    assert response.status_code == 200, response.text
    one = app_client.post(SEARCH, json={"limit": 1, "offset": 0}, headers=auth())
    assert one.status_code == 200, one.text


def test_search_body_that_is_not_json_is_400(app_client: TestClient) -> None:
    headers = auth() | {"Content-Type": "application/json"}
    response = app_client.post(SEARCH, content=b'{"query": "x"', headers=headers)
    assert "JSON" in envelope(response, 400, "invalid_request")


@pytest.mark.parametrize("body", [[], ["query"], "query", 3, None])
def test_search_body_that_is_not_an_object_is_400(app_client: TestClient, body: Any) -> None:
    headers = auth() | {"Content-Type": "application/json"}
    response = app_client.post(SEARCH, content=json.dumps(body).encode(), headers=headers)
    envelope(response, 400, "invalid_request")


VIZ_PARAMS: list[tuple[str, str]] = [
    ("limit", "0"),
    ("limit", "51"),
    ("limit", "ten"),
    ("algorithm", "x"),
    ("fusion", "x"),
    ("modified_after", "2026-13-01"),
    ("query", "q" * 10_001),
]


@pytest.mark.parametrize(
    ("field", "value"), VIZ_PARAMS, ids=[f"{f}={v[:12]}" for f, v in VIZ_PARAMS]
)
def test_invalid_viz_parameter_is_400_naming_it(
    app_client: TestClient, field: str, value: str
) -> None:
    response = app_client.get("/viz/search", params={field: value}, headers=auth())
    assert field in envelope(response, 400, "invalid_request", field)


# --- 404 / 405 ------------------------------------------------------------------------------


def test_unknown_document_is_404_not_found(app_client: TestClient) -> None:
    response = app_client.get("/api/v1/documents/note/unknown", headers=auth())
    assert "note:unknown" in envelope(response, 404, "not_found")
    other_type = app_client.get("/api/v1/documents/file/1", headers=auth())
    envelope(other_type, 404, "not_found")
    envelope(app_client.delete("/api/v1/documents/note/unknown", headers=auth()), 404, "not_found")


@pytest.mark.parametrize("path", ["/api/v1/nothing-here", "/nope", "/api/v1/documents/note"])
def test_unknown_route_has_the_envelope(app_client: TestClient, path: str) -> None:
    envelope(app_client.get(path, headers=auth()), 404, "not_found")


def test_wrong_method_has_the_envelope(app_client: TestClient) -> None:
    response = app_client.get(SEARCH, headers=auth())
    assert response.status_code == 405
    assert set(response.json()["error"]) == {"code", "message", "field"}


# --- 413 ------------------------------------------------------------------------------------


def test_body_over_the_limit_is_413(tmp_path: Path) -> None:
    with running_app(tmp_path, HashingEncoder(), max_body_bytes=2048) as client:
        small = client.post(SEARCH, json={"query": "x" * 1000}, headers=auth())
        assert small.status_code == 200, small.text
        big = client.post(SEARCH, json={"query": "x" * 3000}, headers=auth())
        envelope(big, 413, "payload_too_large")
        batch = {"documents": [doc("big", "word " * 1000)]}
        envelope(
            client.post("/api/v1/documents", json=batch, headers=auth()), 413, "payload_too_large"
        )
        assert client.get("/api/v1/documents/note/big", headers=auth()).status_code == 404


def test_streamed_body_over_the_limit_is_413(tmp_path: Path) -> None:
    """Without a Content-Length (chunked upload) the limit is enforced by counting."""

    def chunks() -> Iterator[bytes]:
        yield b'{"query": "'
        for _ in range(10):
            yield b"x" * 500
        yield b'"}'

    with running_app(tmp_path, HashingEncoder(), max_body_bytes=2048) as client:
        headers = auth() | {"Content-Type": "application/json"}
        response = client.post(SEARCH, content=chunks(), headers=headers)
        assert "content-length" not in {k.lower() for k in response.request.headers}
        envelope(response, 413, "payload_too_large")


# --- unknown fields -------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["doc_type", "tag", "modifed_after", "page"])
def test_an_unknown_search_field_is_400_naming_it(app_client: TestClient, field: str) -> None:
    """A misspelt filter must never silently widen the results."""
    response = app_client.post(SEARCH, json={"query": "", field: ["file"]}, headers=auth())
    message = envelope(response, 400, "invalid_request", field)
    assert f"unknown field '{field}'" == message


def test_the_astrolabe_apps_fields_are_known(app_client: TestClient) -> None:
    body = {"query": "", "include_pca": False, "include_chunks": True, "min_relevance": 0.5}
    response = app_client.post(SEARCH, json=body | {"rerank": False}, headers=auth())
    assert response.status_code == 200, response.text


def test_an_unknown_document_field_is_400_naming_document_and_field(
    app_client: TestClient,
) -> None:
    batch = {"documents": [doc("2"), doc("3", colour="red")]}
    response = app_client.post("/api/v1/documents", json=batch, headers=auth())
    message = envelope(response, 400, "invalid_request", "documents[1].colour")
    assert "note:3" in message
    unknown_top = app_client.post(
        "/api/v1/documents", json={"documents": [doc("2")], "wait": True}, headers=auth()
    )
    envelope(unknown_top, 400, "invalid_request", "wait")
    assert app_client.get("/api/v1/documents/note/2", headers=auth()).status_code == 404
