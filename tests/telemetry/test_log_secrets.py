"""A full run of the real `serve` with JSON logs, every search logged as slow and a failing
verify source: every line of its log is one JSON object, request lines carry their ids, and
no token, key, query or document text it was given appears anywhere in the log."""

import json
import secrets
import signal
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bench.harness.loopback import JsonHandler, loopback_server
from tests.helpers import auth, doc, start_serve

UNIQUE = secrets.token_hex(6)
API_KEY = f"apikey-{UNIQUE}"
VERIFY_TOKEN = f"verifytoken-{UNIQUE}"
DOC_TEXT = f"doctext{UNIQUE} lanterns glow in the walled garden"
TITLE = f"title{UNIQUE}"
QUERIES = {
    kind: f"{kind}query{UNIQUE}"
    for kind in ("search", "viz", "appdialect", "invalid", "mcp", "browse")
}
WRONG_TOKEN = f"wrongtoken-{UNIQUE}"


class FailingSource(JsonHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_json(500, b'{"error": "down"}')


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """The log of the run and the request ids the service answered with."""
    root = tmp_path_factory.mktemp("secrets")
    keys = root / "keys.json"
    keys.write_text(json.dumps({API_KEY: {"sub": "ops", "scope": "search index"}}))
    ids: list[str] = []
    with loopback_server(FailingSource) as verify:
        process, base = start_serve(
            root / "data",
            keys,
            SEARCH_LOG_FORMAT="json",
            SEARCH_SLOW_SEARCH_SECONDS="0",
            SEARCH_VERIFY_URL=f"{verify}/verify",
            SEARCH_VERIFY_TOKEN=VERIFY_TOKEN,
        )
        try:
            with httpx.Client(base_url=base, timeout=60) as client:
                ids = [r.headers["X-Request-ID"] for r in _traffic(client)]
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    yield (root / "serve.log").read_text(encoding="utf-8"), ids


def _traffic(client: httpx.Client) -> Iterator[httpx.Response]:
    key = {"Authorization": f"Bearer {API_KEY}"}
    documents = {"documents": [doc("1", DOC_TEXT, title=TITLE, owner="ops")]}
    yield _expect(client.post("/api/v1/documents?wait=true", json=documents, headers=key), 200)
    yield _expect(client.post("/api/v1/search", json={"query": QUERIES["search"]}, headers=key))
    yield _expect(client.get("/viz/search", params={"query": QUERIES["viz"]}, headers=key))
    yield _expect(
        client.post("/api/v1/vector-viz/search", json={"query": QUERIES["appdialect"]}, headers=key)
    )
    bad = {"query": QUERIES["invalid"], "unknown": True}
    yield _expect(client.post("/api/v1/search", json=bad, headers=key), 400)
    wrong = {"Authorization": f"Bearer {WRONG_TOKEN}"}
    yield _expect(client.post("/api/v1/search", json={"query": "x"}, headers=wrong), 401)
    yield _expect(client.get("/api/v1/me", headers=auth()), 401)  # a JWT, no secret configured
    yield _expect(client.post("/mcp", json=_mcp_search(QUERIES["mcp"]), headers=_mcp(key)))
    yield _expect(client.get("/api/v1/documents/note/1", headers=key))
    _expect(client.get("/metrics", headers=key))  # a scrape: its access line is DEBUG


def _expect(response: httpx.Response, status: int = 200) -> httpx.Response:
    assert response.status_code == status, response.text
    return response


def _mcp(headers: dict[str, str]) -> dict[str, str]:
    return headers | {"Accept": "application/json, text/event-stream"}


def _mcp_search(query: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": query}},
    }


def test_every_line_is_json_and_request_lines_carry_their_ids(run: tuple[str, list[str]]) -> None:
    log, ids = run
    lines = [json.loads(line) for line in log.splitlines() if line.strip()]
    assert lines, "the run logged nothing"
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    access = [line for line in lines if line["logger"] == "astrolabe.access"]
    assert [line["request_id"] for line in access] == ids
    slow = [line for line in lines if line.get("event") == "slow_search"]
    assert len(slow) >= 4 and {line["request_id"] for line in slow} <= set(ids)
    degraded = [line for line in lines if "verify-on-read failed" in line["message"]]
    assert degraded and all(line["request_id"] in ids for line in degraded)


def test_no_token_key_query_or_document_text_is_logged(run: tuple[str, list[str]]) -> None:
    log, _ = run
    jwt = auth()["Authorization"].removeprefix("Bearer ")
    secrets_used = [API_KEY, VERIFY_TOKEN, WRONG_TOKEN, jwt, f"doctext{UNIQUE}", TITLE]
    secrets_used += QUERIES.values()
    for secret in secrets_used:
        assert secret not in log, secret
