"""The MCP endpoint through the SDK's Streamable HTTP client, against the real service on a
loopback port with a third of the demo corpus (every third document) and the real model: the
tools' schemas, the same hits as `POST /api/v1/search`, access rules on every tool, errors in
the HTTP API's words, tokens."""

import asyncio
import json
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import httpx2
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Tool

from app.auth import Authenticator
from app.config import Settings
from app.embeddings.dense import DenseEncoder, HashingEncoder, MiniLMEncoder
from app.ingest.demo import DEMO_CORPUS
from app.main import create_app
from app.search.models.requests import SearchBody
from bench.harness.loopback import free_port
from tests.helpers import JWT_SECRET, auth, token
from tests.search.test_verify_on_read import NOTES, Source, source  # noqa: F401 (the fixture)

DEMO_DOCUMENTS = [json.loads(line) for line in DEMO_CORPUS.read_text().splitlines() if line]
CORPUS = DEMO_DOCUMENTS[::3]  # every field, folder and owner still occurs; a third of the time
TOOLS = {"search", "list_facets", "get_document", "index_status"}


T = TypeVar("T")


def in_own_loop(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the client on a fresh event loop in a thread of its own: another test's loop (the
    browser tests' Playwright) may still be running in this one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(main())).result()


@dataclass
class Service:
    base: str
    app: FastAPI

    def headers(self, user: str = "dave", groups: list[str] | None = None) -> dict[str, str]:
        return auth(user, ["demo"] if groups is None else groups, scope="search")

    def index(self, documents: list[dict[str, Any]]) -> None:
        indexed = httpx.post(
            f"{self.base}/api/v1/documents?wait=true",
            json={"documents": documents},
            headers=auth("loader", scope="index"),
            timeout=600,
        )
        assert indexed.status_code == 200, indexed.text

    def http_search(self, body: dict[str, Any], **who: Any) -> httpx.Response:
        return httpx.post(
            f"{self.base}/api/v1/search", json=body, headers=self.headers(**who), timeout=60
        )

    def calls(
        self, *calls: tuple[str, dict[str, Any]], headers: dict[str, str] | None = None
    ) -> list[CallToolResult]:
        """The calls in order, over one MCP client session."""

        async def run() -> list[CallToolResult]:
            async with (
                httpx2.AsyncClient(headers=headers or self.headers()) as http,
                Client(streamable_http_client(f"{self.base}/mcp", http_client=http)) as client,
            ):
                return [await client.call_tool(name, args) for name, args in calls]

        return in_own_loop(run)

    def call(self, name: str, args: dict[str, Any], **who: Any) -> CallToolResult:
        return self.calls((name, args), headers=self.headers(**who))[0]

    def tools(self) -> list[Tool]:
        async def run() -> list[Tool]:
            async with (
                httpx2.AsyncClient(headers=self.headers()) as http,
                Client(streamable_http_client(f"{self.base}/mcp", http_client=http)) as client,
            ):
                return list((await client.list_tools()).tools)

        return in_own_loop(run)


@contextmanager
def served(data_dir: Path, dense: DenseEncoder, **settings: Any) -> Iterator[Service]:
    """The app under uvicorn on a free loopback port, ready to answer."""
    app = create_app(
        Settings(data_dir=data_dir, jwt_secret=JWT_SECRET, **settings),
        authenticator=Authenticator(JWT_SECRET, {}),
        dense=dense,
    )
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="mcp-test-server")
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        app.state.astrolabe.ready.wait(timeout=120)
        yield Service(f"http://127.0.0.1:{port}", app)
    finally:
        server.should_exit = True
        thread.join(timeout=60)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEncoder) -> Iterator[Service]:
    with served(tmp_path_factory.mktemp("mcp") / "data", minilm) as running:
        running.index(CORPUS)
        yield running


def _visible_to(user: str, groups: list[str]) -> set[tuple[str, str]]:
    readers = {f"user:{user}"} | {f"group:{g}" for g in groups}
    return {
        (d["doc_type"], d["doc_id"])
        for d in CORPUS
        if d["owner"] == user or readers & set(d.get("acl") or [])
    }


def _hits(result: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(r["doc_type"], r["doc_id"], r["chunk_index"]) for r in result["results"]]


def _structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return dict(result.structured_content)


def _error(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    text = result.content[0]
    assert text.type == "text"
    return text.text


# -- tools and their schemas ----------------------------------------------------------------


def test_the_four_tools_are_read_only_with_output_schemas(service: Service) -> None:
    tools = {tool.name: tool for tool in service.tools()}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.output_schema is not None and tool.description
    result_fields = tools["search"].output_schema["$defs"]["ToolSearchResult"]["properties"]  # type: ignore[index]
    assert {"doc_type", "doc_id", "title", "excerpt", "score", "context"} <= set(result_fields)


def test_the_search_schema_carries_the_bounds_of_the_http_request_model(
    service: Service,
) -> None:
    search = next(tool for tool in service.tools() if tool.name == "search")
    properties = search.input_schema["properties"]
    http = SearchBody.model_json_schema()["properties"]
    for name, bound in [
        ("limit", "minimum"),
        ("limit", "maximum"),
        ("query", "maxLength"),
        ("score_threshold", "minimum"),
    ]:
        assert properties[name][bound] == http[name][bound], (name, bound)
    assert (properties["limit"]["minimum"], properties["limit"]["maximum"]) == (1, 100)
    assert properties["path_prefixes"]["maxItems"] == 20
    assert (properties["context_chars"]["minimum"], properties["context_chars"]["maximum"]) == (
        0,
        2000,
    )
    assert set(properties) == {
        "query", "limit", "algorithm", "fusion", "granularity", "score_threshold", "sort",
        "doc_types", "modified_after", "modified_before", "path_prefixes", "tags", "tags_all",
        "categories", "owners", "include_context", "context_chars",
    }  # fmt: skip
    assert "strict path prefix" in properties["path_prefixes"]["description"]
    assert "RFC 3339" in properties["modified_after"]["description"]


# -- the same hits as the HTTP API -----------------------------------------------------------

SAME_AS_HTTP = {
    "no filter": {"query": "quarterly budget review"},
    "browse": {"query": "", "limit": 20},
    "doc_types": {"query": "meeting notes", "doc_types": ["note", "deck_card"]},
    "modified_after": {"query": "security audit", "modified_after": "2026-01-01"},
    "modified_before (Unix seconds)": {"query": "security audit", "modified_before": 1735689600},
    "date range": {
        "query": "travel",
        "modified_after": "2025-01-01T00:00:00Z",
        "modified_before": "2025-12-31T23:59:59+00:00",
    },
    "path_prefixes": {"query": "project plan", "path_prefixes": ["/Projects", "Finance/"]},
    "tags": {"query": "deployment", "tags": ["infra", "security"]},
    "tags_all": {"query": "review", "tags_all": ["review", "urgent"]},
    "categories": {"query": "ideas", "categories": ["Work", "Ideas"]},
    "owners": {"query": "customer ticket", "owners": ["erin"]},
    "semantic, document granularity": {
        "query": "onboarding new engineers",
        "algorithm": "semantic",
        "granularity": "document",
        "limit": 15,
    },
    "newest first": {"query": "budget", "sort": "newest", "limit": 20},
    "bm25 with a threshold": {"query": "kubernetes", "algorithm": "bm25", "score_threshold": 1.0},
    "dbsf, everything at once": {
        "query": "budget",
        "fusion": "dbsf",
        "doc_types": ["file"],
        "modified_after": "2024-06-01",
        "path_prefixes": ["/Finance", "/Projects"],
        "owners": ["alice", "bob", "carol", "dave", "erin"],
        "limit": 30,
    },
}


@pytest.mark.parametrize("arguments", SAME_AS_HTTP.values(), ids=SAME_AS_HTTP.keys())
def test_search_gives_the_hits_of_the_http_search(
    service: Service, arguments: dict[str, Any]
) -> None:
    http = service.http_search(arguments)
    assert http.status_code == 200, http.text
    expected = http.json()
    found = _structured(service.call("search", arguments))
    assert _hits(expected), "the case finds nothing: it compares nothing"
    assert _hits(found) == _hits(expected)
    assert [r["score"] for r in found["results"]] == [r["score"] for r in expected["results"]]
    for key in ("total_found", "filters", "algorithm", "fusion", "granularity"):
        assert found[key] == expected[key], key
    for mine, theirs in zip(found["results"], expected["results"], strict=True):
        assert mine.pop("context") is None
        assert mine == theirs


def test_a_folder_is_a_strict_prefix(service: Service) -> None:
    found = _structured(
        service.call("search", {"query": "", "path_prefixes": ["/Projects"], "limit": 100})
    )
    paths = [r["file_path"] for r in found["results"]]
    expected = sorted(
        d["file_path"] for d in CORPUS if (d.get("file_path") or "").startswith("/Projects/")
    )
    assert sorted(paths) == expected and expected
    assert any(d.get("file_path", "").startswith("/Projects-old/") for d in CORPUS)


def test_the_text_rendering_lists_the_hits(service: Service) -> None:
    result = service.call("search", {"query": "pasta recipe with garlic", "limit": 3})
    text = result.content[0]
    assert text.type == "text"
    lines = text.text.splitlines()
    assert lines[0].startswith("3 results for 'pasta recipe with garlic'")
    strong = _structured(result)["strong_found"]
    assert strong > 0 and f"{strong} of them strong matches" in lines[0]
    nonsense = service.call("search", {"query": "zzqxqv nonexistentword"}).content[0]
    assert nonsense.type == "text" and "none matching well" in nonsense.text.splitlines()[0]
    for rank, hit in enumerate(_structured(result)["results"], 1):
        assert any(
            line.startswith(f"{rank}. {hit['title']} [{hit['doc_type']} {hit['doc_id']}]")
            for line in lines
        )


def test_context_is_the_document_text_around_the_chunk(service: Service) -> None:
    chars = 200
    found = _structured(
        service.call(
            "search",
            {
                "query": "customer support ticket escalation",
                "limit": 40,
                "include_context": True,
                "context_chars": chars,
            },
        )
    )
    contents = {(d["doc_type"], d["doc_id"]): d["content"] for d in CORPUS}
    inner = 0
    for result in found["results"]:
        context = result["context"]
        content = contents[(result["doc_type"], result["doc_id"])]
        start, end = result["chunk_start_offset"], result["chunk_end_offset"]
        assert content[start:end] == result["excerpt"]
        # The chunk-context service's text: the content at the same offsets (whitespace
        # between two chunks comes back as spaces).
        assert _words(context["before_context"]) == _words(content[max(0, start - chars) : start])
        assert _words(context["after_context"]) == _words(content[end : end + chars])
        assert context["has_more_before"] == (start > chars)
        assert context["has_more_after"] == (end + chars < len(content.rstrip()))
        if start > 0 and end < len(content.rstrip()):
            inner += 1
    assert inner, "no hit had text on both sides: the context was not tested"


def _words(text: str) -> list[str]:
    return text.split()


# -- access -----------------------------------------------------------------------------------


def test_a_user_sees_only_their_documents_through_every_tool(service: Service) -> None:
    mine = _visible_to("alice", [])
    everything = {(d["doc_type"], d["doc_id"]) for d in CORPUS}
    hidden = sorted(everything - mine)
    assert mine and hidden
    alice = service.headers("alice", [])
    browse, facets, status, seen, unseen, by_bob = service.calls(
        ("search", {"query": "", "limit": 100}),
        ("list_facets", {}),
        ("index_status", {}),
        ("get_document", {"doc_type": sorted(mine)[0][0], "doc_id": sorted(mine)[0][1]}),
        ("get_document", {"doc_type": hidden[0][0], "doc_id": hidden[0][1]}),
        ("search", {"query": "report", "owners": ["bob"], "limit": 100}),
        headers=alice,
    )
    assert {(r["doc_type"], r["doc_id"]) for r in _structured(browse)["results"]} == mine
    assert _structured(facets)["total_documents"] == len(mine)
    assert sum(_structured(facets)["facets"]["owner"].values()) == len(mine)
    assert _structured(status)["visible_documents"] == len(mine)
    assert _structured(status)["documents"] == len(everything)
    assert _structured(seen)["doc_id"] == sorted(mine)[0][1]
    assert _error(unseen) == f"no document {hidden[0][0]}:{hidden[0][1]}"
    assert {(r["doc_type"], r["doc_id"]) for r in _structured(by_bob)["results"]} <= mine


def test_a_group_widens_what_a_user_sees(service: Service) -> None:
    result = service.call("list_facets", {}, user="alice", groups=["demo"])
    assert _structured(result)["total_documents"] == len(_visible_to("alice", ["demo"]))


def test_list_facets_counts_under_the_filters(service: Service) -> None:
    counted = _structured(service.call("list_facets", {"doc_types": ["file"]}))
    files = [d for d in CORPUS if d["doc_type"] == "file"]
    assert counted["total_documents"] == len(files)
    assert counted["facets"]["doc_type"]["note"] == sum(d["doc_type"] == "note" for d in CORPUS)
    top = {d["file_path"].split("/")[1] for d in files}
    assert set(counted["facets"]["folders"]) == {f"/{name}" for name in top}
    assert counted["filters"]["doc_types"] == ["file"]


def test_get_document_gives_the_http_status_of_the_document(service: Service) -> None:
    doc = next(d for d in CORPUS if d["doc_type"] == "file")
    found = _structured(service.call("get_document", {"doc_type": "file", "doc_id": doc["doc_id"]}))
    http = httpx.get(
        f"{service.base}/api/v1/documents/file/{doc['doc_id']}",
        headers=auth("loader", scope="index"),
    ).json()
    assert found == http
    assert (found["title"], found["status"]) == (doc["title"], "indexed")


def test_verify_on_read_applies_to_every_tool(tmp_path: Path, source: Source) -> None:  # noqa: F811
    source.statuses = {("note", "n1"): "forbidden", ("note", "n2"): "missing"}
    verify = {"verify_url": source.url, "verify_token": "secret", "verify_timeout": 2.0}
    with served(tmp_path / "data", HashingEncoder(), **verify) as running:
        running.index(NOTES)
        alice = running.headers("alice", [])
        browse, forbidden, missing, kept = running.calls(
            ("search", {"query": "", "limit": 20}),
            ("get_document", {"doc_type": "note", "doc_id": "n1"}),
            ("get_document", {"doc_type": "note", "doc_id": "n2"}),
            ("get_document", {"doc_type": "note", "doc_id": "n3"}),
            headers=alice,
        )
        http = running.http_search({"query": "", "limit": 20}, user="alice", groups=[]).json()
    found = [r["doc_id"] for r in _structured(browse)["results"]]
    assert found == [f"n{i}" for i in range(10) if i not in (1, 2)]
    assert found == [r["doc_id"] for r in http["results"]]
    assert _error(forbidden) == "no document note:n1"
    assert _error(missing) == "no document note:n2"
    assert _structured(kept)["doc_id"] == "n3"
    assert {"user": "alice", "documents": [{"doc_type": "note", "doc_id": "n1"}]} in [
        r["body"] for r in source.requests
    ]


# -- errors -----------------------------------------------------------------------------------

BAD_ARGUMENTS = {
    "unparseable date": {"modified_after": "2026-13-01"},
    "negative Unix seconds": {"modified_before": -5},
    "boolean date": {"modified_after": True},
    "inverted range": {"modified_after": "2026-06-01", "modified_before": "2026-01-01"},
    "21 folders": {"path_prefixes": [f"/f{i}" for i in range(21)]},
    "limit 0": {"limit": 0},
    "limit 101": {"limit": 101},
    "unknown algorithm": {"algorithm": "fuzzy"},
    "negative threshold": {"score_threshold": -1},
    "doc_types not a list": {"doc_types": 7},
    "query too long": {"query": "x" * 10_001},
}


@pytest.mark.parametrize("arguments", BAD_ARGUMENTS.values(), ids=BAD_ARGUMENTS.keys())
def test_bad_arguments_are_tool_errors_with_the_http_message(
    service: Service, arguments: dict[str, Any]
) -> None:
    http = service.http_search(arguments)
    assert http.status_code == 400, http.text
    envelope = http.json()["error"]
    result = service.call("search", arguments)
    assert _error(result) == envelope["message"]
    assert result.structured_content == {"error": envelope}


def test_an_unknown_argument_is_an_error_not_a_wider_search(service: Service) -> None:
    result = service.call("search", {"query": "budget", "doc_type": ["file"]})
    http = service.http_search({"query": "budget", "doc_type": ["file"]})
    assert http.status_code == 400
    assert _error(result) == http.json()["error"]["message"] == "unknown field 'doc_type'"


def test_a_bad_doc_type_is_refused_like_the_http_path(service: Service) -> None:
    http = httpx.get(
        f"{service.base}/api/v1/documents/Not%20A%20Type/1", headers=auth("loader", scope="index")
    )
    assert http.status_code == 400
    result = service.call("get_document", {"doc_type": "Not A Type", "doc_id": "1"})
    assert _error(result) == http.json()["error"]["message"]


def test_the_session_survives_errors(service: Service) -> None:
    results = service.calls(
        ("search", {"modified_after": "yesterday"}),
        ("get_document", {"doc_type": "file", "doc_id": "no-such-document"}),
        ("search", {"query": "budget", "limit": 2}),
    )
    assert [r.is_error for r in results] == [True, True, False]
    assert len(_structured(results[2])["results"]) == 2


# -- tokens -----------------------------------------------------------------------------------

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.mark.parametrize(
    ("authorization", "status"),
    [
        (lambda: None, 401),
        (lambda: "Bearer not-a-token", 401),
        (lambda: f"Bearer {token('dave', scope='search', ttl=-60)}", 401),
        (lambda: f"Bearer {token('dave', scope='index')}", 403),
    ],
    ids=["missing", "wrong", "expired", "without the search scope"],
)
def test_a_request_without_a_valid_token_is_refused_before_mcp(
    service: Service, authorization: Callable[[], str | None], status: int
) -> None:
    header = authorization()  # minted now: a token made at collection may expire before this
    headers = ACCEPT | ({"Authorization": header} if header else {})
    response = httpx.post(f"{service.base}/mcp", json=INITIALIZE, headers=headers)
    assert response.status_code == status
    assert response.json()["error"]["code"] in {"unauthenticated", "forbidden"}


def test_a_valid_token_opens_the_session(service: Service) -> None:
    headers = ACCEPT | service.headers()
    response = httpx.post(f"{service.base}/mcp", json=INITIALIZE, headers=headers)
    assert response.status_code == 200
    assert response.json()["result"]["serverInfo"]["name"] == "astrolabe-search"


def test_the_sdk_client_cannot_connect_with_a_wrong_token(service: Service) -> None:
    with pytest.raises(Exception):  # noqa: B017 (the SDK wraps the 401 in its own error types)
        service.calls(("index_status", {}), headers={"Authorization": "Bearer wrong"})


def test_the_endpoint_can_be_switched_off(tmp_path: Path) -> None:
    app = create_app(
        Settings(data_dir=tmp_path / "data", jwt_secret=JWT_SECRET, mcp_enabled=False),
        dense=HashingEncoder(),
    )
    with TestClient(app) as client:
        response = client.post("/mcp", json=INITIALIZE, headers=ACCEPT | auth("dave"))
        assert response.status_code == 404


# -- nothing is held open ---------------------------------------------------------------------

# A client that would wait on an open stream for as long as the server holds it: a few seconds
# for the whole answer, body included, or the read times out and the test fails.
PROMPTLY = httpx.Timeout(5.0)


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH"])
def test_only_post_is_served_at_mcp_and_every_other_method_is_refused_at_once(
    service: Service, method: str
) -> None:
    headers = {"Accept": "text/event-stream, application/json"} | service.headers()
    response = httpx.request(method, f"{service.base}/mcp", headers=headers, timeout=PROMPTLY)
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_a_get_at_mcp_is_refused_before_the_token_is_read(service: Service) -> None:
    response = httpx.get(f"{service.base}/mcp", timeout=PROMPTLY)
    assert response.status_code == 405


def _get_paths(app: FastAPI) -> list[str]:
    """Every path answering GET: the documented ones and the routes kept out of the schema,
    path parameters filled with a plausible value."""
    documented = [path for path, methods in app.openapi()["paths"].items() if "get" in methods]
    undocumented = [
        path
        for route in app.routes
        if (path := getattr(route, "path", "")) and getattr(route, "methods", None) is None
    ]
    paths = {p.replace("{doc_type}", "note").replace("{doc_id}", "1") for p in documented}
    return sorted(paths | set(undocumented))


def test_every_get_route_answers_within_the_deadline(service: Service) -> None:
    paths = _get_paths(service.app)
    assert {"/mcp", "/viz", "/api/v1/status", "/metrics"} <= set(paths)
    headers = auth("dave", ["demo"]) | {"Accept": "text/event-stream, application/json, */*"}
    for path in paths:
        with httpx.stream("GET", service.base + path, headers=headers, timeout=PROMPTLY) as answer:
            answer.read()  # the whole body, or a ReadTimeout
            assert answer.status_code < 500, (path, answer.status_code)
