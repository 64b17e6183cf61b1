"""Inputs a hostile or careless client sends: every one gets a 2xx or a 4xx with the envelope,
never a 500. Lone UTF-16 surrogates (valid JSON, not Unicode) anywhere in a body, numbers too
long to convert, booleans for dates, floats for dates (allowed: the schema says number)."""

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.embeddings.dense import HashingEncoder
from tests.helpers import auth, doc, running_app

LONE = "\ud800"
T0 = 1_767_225_600  # 2026-01-01T00:00:00Z


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with running_app(tmp_path_factory.mktemp("hostile") / "data", HashingEncoder()) as client:
        yield client


def post(client: TestClient, path: str, body: Any) -> Any:
    """JSON with \\u escapes, as a client would send a lone surrogate."""
    raw = json.dumps(body, ensure_ascii=True).encode()
    headers = auth() | {"Content-Type": "application/json"}
    return client.post(path, content=raw, headers=headers)


def refused(response: Any, field_prefix: str) -> str:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert (error["field"] or "").startswith(field_prefix), error
    message: str = error["message"]
    return message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tags", [LONE]),
        ("tags_all", ["ok", f"x{LONE}"]),
        ("categories", [LONE]),
        ("owners", [LONE]),
        ("doc_types", [LONE]),
        ("path_prefixes", [f"/a{LONE}"]),
        ("path_prefix", f"/a{LONE}"),
        ("query", f"comet {LONE}"),
    ],
)
def test_a_lone_surrogate_in_a_search_is_400_naming_the_field(
    client: TestClient, field: str, value: Any
) -> None:
    for path in ("/api/v1/search", "/api/v1/vector-viz/search"):
        refused(post(client, path, {field: value}), field)


@pytest.mark.parametrize(
    "field", ["doc_id", "doc_type", "title", "content", "owner", "tags", "acl", "file_path"]
)
def test_a_lone_surrogate_in_a_document_is_400_and_nothing_is_written(
    client: TestClient, field: str
) -> None:
    value: Any = [f"user:{LONE}"] if field in ("tags", "acl") else f"/x{LONE}"
    document = doc(f"s-{field}") | {field: value}
    refused(post(client, "/api/v1/documents", {"documents": [document]}), "documents[0]")
    assert client.get(f"/api/v1/documents/note/s-{field}", headers=auth()).status_code == 404


def test_a_lone_surrogate_in_a_field_name_is_400(client: TestClient) -> None:
    refused(post(client, "/api/v1/search", {f"tags{LONE}": ["a"]}), "")


def test_a_5000_digit_date_is_400_in_a_document_and_in_a_search(client: TestClient) -> None:
    digits = "5" * 5000
    document = doc("long-date", modified_at=digits)
    refused(post(client, "/api/v1/documents", {"documents": [document]}), "documents[0]")
    refused(post(client, "/api/v1/search", {"modified_after": digits}), "modified_after")
    as_number = b'{"documents": [{"doc_type": "note", "doc_id": "n", "owner": "a", "modified_at": '
    response = client.post(
        "/api/v1/documents",
        content=as_number + digits.encode() + b"}]}",
        headers=auth() | {"Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text


@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_is_not_a_date_in_a_document(client: TestClient, value: bool) -> None:
    document = doc(f"bool-{value}", modified_at=value)
    message = refused(post(client, "/api/v1/documents", {"documents": [document]}), "documents[0]")
    assert "modified_at" in message


def test_a_float_date_is_truncated_to_seconds_in_a_document_and_in_a_search(
    client: TestClient,
) -> None:
    response = post(
        client, "/api/v1/documents?wait=true", {"documents": [doc("f", modified_at=T0 + 0.9)]}
    )
    assert response.status_code == 200, response.text
    status = client.get("/api/v1/documents/note/f", headers=auth()).json()
    assert status["modified_at"] == "2026-01-01T00:00:00Z"
    result = post(client, "/api/v1/search", {"modified_after": T0 + 0.5, "modified_before": T0})
    assert result.status_code == 200, result.text
    assert [r["doc_id"] for r in result.json()["results"]] == ["f"]


def test_a_405_lists_every_method_of_the_path(client: TestClient) -> None:
    for method in ("TRACE", "PUT", "OPTIONS"):
        response = client.request(method, "/api/v1/documents/note/x", headers=auth())
        assert response.status_code == 405
        assert response.headers["Allow"] == "DELETE, GET"
        assert response.json()["error"]["code"] == "method_not_allowed"
