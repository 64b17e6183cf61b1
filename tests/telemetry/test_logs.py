"""Request ids (echoed, made when missing or unsafe, on every answer), JSON log lines that carry
them, the slow-search line, and an unexpected error answered with the envelope and its id."""

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.embeddings.dense import HashingEncoder
from tests.helpers import auth, doc, envelope, index, running_app

GENERATED = re.compile(r"[0-9a-f]{32}")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """JSON logs, every search logged as slow, a small body limit, and a route that fails."""
    data = tmp_path_factory.mktemp("logs") / "data"
    with running_app(
        data, HashingEncoder(), log_format="json", slow_search_seconds=0, max_body_bytes=4096
    ) as app_client:
        app = app_client.app
        assert isinstance(app, FastAPI)

        def fail() -> None:
            raise RuntimeError("a bug")

        app.add_api_route("/test-only/fail", fail)
        index(app_client, doc("1", "lantern in the garden", tags=["plants"]))
        yield app_client


def json_lines(text: str) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [json.loads(line) for line in text.splitlines() if line]
    return lines


@pytest.mark.parametrize(
    "sent", ["abc-123", "0f8b7c6e-3d5a-4b1c-9e2f-a1b2c3d4e5f6", "x" * 128, "a.b_c~d:e/f+g=h@i"]
)
def test_a_safe_request_id_is_echoed(client: TestClient, sent: str) -> None:
    response = client.get("/healthz", headers={"X-Request-ID": sent})
    assert response.headers["X-Request-ID"] == sent


@pytest.mark.parametrize("sent", ["", "two words", "x" * 129, "naïve", 'quote"d', "a\tb"])
def test_an_unsafe_request_id_is_replaced(client: TestClient, sent: str) -> None:
    response = client.get("/healthz", headers={b"X-Request-ID": sent.encode()})
    assert response.status_code == 200
    assert GENERATED.fullmatch(response.headers["X-Request-ID"])


def test_a_missing_request_id_is_made_anew_for_each_request(client: TestClient) -> None:
    made = {client.get("/healthz").headers["X-Request-ID"] for _ in range(3)}
    assert len(made) == 3 and all(GENERATED.fullmatch(rid) for rid in made)


def test_every_kind_of_answer_carries_the_id(client: TestClient) -> None:
    headers = {"X-Request-ID": "every-answer"}
    answers = [
        client.post("/api/v1/search", json={"query": "x"}, headers=headers),  # 401
        client.post("/api/v1/search", json={"nope": 1}, headers=auth() | headers),  # 400
        client.get("/nowhere", headers=headers),  # 404
        client.put("/api/v1/search", headers=headers),  # 405
        client.post("/api/v1/documents", content=b"x" * 5000, headers=auth() | headers),  # 413
    ]
    assert [a.status_code for a in answers] == [401, 400, 404, 405, 413]
    assert all(a.headers["X-Request-ID"] == "every-answer" for a in answers)


def test_an_unexpected_error_is_the_envelope_with_the_id_and_is_logged_with_it(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    response = client.get("/test-only/fail", headers={"X-Request-ID": "boom-1"})
    envelope(response, 500, "internal_error")
    assert response.headers["X-Request-ID"] == "boom-1"
    lines = [line for line in json_lines(capsys.readouterr().err) if line["logger"] != "httpx2"]
    error = next(line for line in lines if line["message"] == "unhandled error")
    assert error["request_id"] == "boom-1" and error["level"] == "ERROR"
    assert "RuntimeError: a bug" in error["exception"]
    access = next(line for line in lines if "status" in line)
    assert access["status"] == 500 and access["request_id"] == "boom-1"


def test_the_lines_of_a_search_are_json_with_its_id_and_the_slow_line_has_the_shape(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    body = {"query": "lantern", "tags": ["plants"], "owners": ["alice"], "include_facets": True}
    headers = auth() | {"X-Request-ID": "search-42"}
    assert client.post("/api/v1/search", json=body, headers=headers).status_code == 200
    lines = [line for line in json_lines(capsys.readouterr().err) if line["logger"] != "httpx2"]
    assert {line["logger"] for line in lines} == {"astrolabe.access", "astrolabe.search"}
    assert all(line["request_id"] == "search-42" for line in lines)
    access = next(line for line in lines if line["logger"] == "astrolabe.access")
    assert access | {"duration_ms": 0} == access | {
        "method": "POST",
        "path": "/api/v1/search",
        "route": "/api/v1/search",
        "status": 200,
        "duration_ms": 0,
        "level": "INFO",
    }
    slow = next(line for line in lines if line["logger"] == "astrolabe.search")
    assert slow["event"] == "slow_search" and slow["level"] == "WARNING"
    assert slow["filters"] == ["tags", "owners"]
    assert set(slow["stages_ms"]) == {"embed", "engine", "facets", "total"}
    assert slow["algorithm"] == "hybrid" and slow["results"] == 1
    assert "lantern" not in json.dumps(slow) and "plants" not in json.dumps(slow)


def test_plain_text_is_the_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with running_app(tmp_path / "data", HashingEncoder()) as plain:
        capsys.readouterr()
        plain.get("/nowhere", headers={"X-Request-ID": "plain-1"})
        err = capsys.readouterr().err
    assert "INFO astrolabe.access [plain-1]: GET /nowhere 404" in err
