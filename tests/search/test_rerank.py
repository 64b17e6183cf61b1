"""The optional reranker against a loopback server speaking the /rerank protocol: it reorders
the first candidates; a slow, failing or confused one leaves the retrieval order, within the
search's deadline."""

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.embeddings.dense import HashingEncoder
from app.search.rerank import endpoint
from bench.harness.loopback import JsonHandler, loopback_server
from tests.helpers import auth, doc, ids, index, running_app, search

TIMEOUT = 0.5
CORPUS = [doc(f"d{i}", f"Lantern number {i} in the garden" + " lantern" * i) for i in range(8)]


@dataclass
class RerankServer:
    """Scores a document by the digit after "number" (higher first); `mode`: "" answers,
    "sleep", "500", "bad-index", "partial" (only the first two documents)."""

    mode: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        documents = body["documents"] if self.mode != "partial" else body["documents"][:2]
        scores = [int(text.split("number ")[1].split()[0]) / 10 for text in documents]
        if self.mode == "bad-index":
            return {"results": [{"index": len(documents), "relevance_score": 0.5}]}
        return {"results": [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]}


def handler_for(server: RerankServer) -> type[JsonHandler]:
    class Handler(JsonHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            with server.lock:
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers.items()), "body": body}
                )
            if server.mode == "sleep":
                time.sleep(TIMEOUT * 4)
            status, answer = (500, b"{}") if server.mode == "500" else (200, b"")
            answer = answer or json.dumps(server.answer(body)).encode()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a caller gone
                self.send_json(status, answer)

    return Handler


@pytest.fixture(scope="module")
def reranker() -> Iterator[tuple[str, RerankServer]]:
    server = RerankServer()
    with loopback_server(handler_for(server)) as url:
        yield url, server


@pytest.fixture(scope="module")
def client(
    tmp_path_factory: pytest.TempPathFactory, reranker: tuple[str, RerankServer]
) -> Iterator[TestClient]:
    url, _ = reranker
    with running_app(
        tmp_path_factory.mktemp("rerank") / "data",
        HashingEncoder(),
        rerank_url=url,
        rerank_model="bge-reranker",
        rerank_api_key="rerank-key",
        rerank_top_n=5,
        verify_timeout=TIMEOUT,
    ) as app:
        index(app, *CORPUS)
        yield app


@pytest.fixture(autouse=True)
def answering(reranker: tuple[str, RerankServer]) -> Iterator[RerankServer]:
    _, server = reranker
    server.mode = ""
    with server.lock:
        server.requests.clear()
    yield server


def test_the_endpoint_is_the_base_url_plus_rerank_unless_given() -> None:
    assert endpoint("http://tei:8080") == "http://tei:8080/rerank"
    assert endpoint("http://tei:8080/v1/") == "http://tei:8080/v1/rerank"
    assert endpoint("https://api.example/v1/rerank") == "https://api.example/v1/rerank"


def test_rerank_reorders_the_first_candidates(client: TestClient, answering: RerankServer) -> None:
    plain = search(client, query="lantern garden", algorithm="bm25", limit=8)
    found = search(client, query="lantern garden", algorithm="bm25", limit=8, rerank=True)
    assert found["reranked"] is True and "reranked" not in plain
    top = ids(plain)[:5]
    assert ids(found)[:5] == sorted(top, key=lambda d: -int(d[1:]))  # the reranker's order
    assert ids(found)[5:] == ids(plain)[5:]  # past top_n: the retrieval order
    results = found["results"]
    assert [r["relevance_source"] for r in results] == ["rerank"] * 5 + ["bm25_normalised"] * 3
    assert [r["relevance"] for r in results[:5]] == [int(d[1:]) / 10 for d in ids(found)[:5]]
    assert found["timing_ms"]["rerank"] >= 0
    (request,) = answering.requests
    assert request["path"] == "/rerank"
    assert request["headers"]["Authorization"] == "Bearer rerank-key"
    assert (
        request["body"]["model"] == "bge-reranker" and request["body"]["query"] == "lantern garden"
    )
    assert request["body"]["top_n"] == 5 and len(request["body"]["documents"]) == 5
    assert request["body"]["documents"][0].startswith("Document ")  # title line, then the text
    status = client.get("/api/v1/status", headers=auth()).json()
    assert status["rerank_available"] is True


def test_pages_and_min_relevance_follow_the_reranked_order(client: TestClient) -> None:
    full = search(client, query="lantern garden", algorithm="bm25", limit=8, rerank=True)
    second = search(
        client, query="lantern garden", algorithm="bm25", limit=2, offset=2, rerank=True
    )
    assert ids(second) == ids(full)[2:4]
    floor = full["results"][2]["relevance"]
    floored = search(
        client, query="lantern garden", algorithm="bm25", limit=8, rerank=True, min_relevance=floor
    )
    kept = [r["doc_id"] for r in full["results"] if r["relevance"] >= floor]
    assert ids(floored) == kept and floored["total_found"] == len(kept)


@pytest.mark.parametrize("mode", ["sleep", "500", "bad-index"])
def test_a_failing_reranker_keeps_the_retrieval_order(
    client: TestClient, answering: RerankServer, mode: str
) -> None:
    plain = search(client, query="lantern garden", limit=8)
    answering.mode = mode
    started = time.monotonic()
    found = search(client, query="lantern garden", limit=8, rerank=True)
    assert time.monotonic() - started < TIMEOUT * 3  # never waits past the search's deadline
    assert found["reranked"] is False and ids(found) == ids(plain)
    assert {r["relevance_source"] for r in found["results"]} == {"fusion_normalised"}
    assert "rerank" in found["timing_ms"]


def test_documents_the_answer_leaves_out_follow_the_ones_it_ranked(
    client: TestClient, answering: RerankServer
) -> None:
    plain = search(client, query="lantern garden", algorithm="bm25", limit=8)
    answering.mode = "partial"
    found = search(client, query="lantern garden", algorithm="bm25", limit=8, rerank=True)
    first_two = sorted(ids(plain)[:2], key=lambda d: -int(d[1:]))
    assert found["reranked"] is True and ids(found) == first_two + ids(plain)[2:]


def test_the_apps_alias_says_reranked(client: TestClient) -> None:
    response = client.post(
        "/api/v1/vector-viz/search", json={"query": "lantern", "rerank": True}, headers=auth()
    )
    assert response.status_code == 200 and response.json()["reranked"] is True


def test_without_a_reranker_rerank_keeps_its_422(tmp_path: Path) -> None:
    with running_app(tmp_path / "data", HashingEncoder()) as app:
        response = app.post("/api/v1/search", json={"query": "x", "rerank": True}, headers=auth())
        assert response.status_code == 422 and response.json()["error"] == "rerank_not_configured"
        assert app.get("/api/v1/status", headers=auth()).json()["rerank_available"] is False
