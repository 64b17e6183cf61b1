"""Remote embedding against a loopback OpenAI-compatible server started by the test: it serves
the real MiniLM's vectors (good case) or another model's (mismatch), and can fail on request."""

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app import cli
from app.auth import Authenticator
from app.config import Settings
from app.embeddings.dense import HashingEncoder, MiniLMEncoder
from app.embeddings.remote import (
    PROBE_SENTENCE,
    EmbeddingMismatch,
    EmbeddingServerError,
    EmbeddingUnavailable,
    RemoteEncoder,
    cosine,
    reference_probe_vector,
)
from app.main import create_app
from bench.harness.loopback import JsonHandler, free_port, loopback_server
from tests.helpers import JWT_SECRET, auth, doc

Embed = Callable[[list[str]], list[list[float]]]


@dataclass
class FakeServer:
    """What the loopback server does and what it saw."""

    embed: Embed
    fail_with: list[int] = field(default_factory=list)  # statuses answered before succeeding
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""


@contextmanager
def embedding_server(embed: Embed, fail_with: list[int] | None = None) -> Iterator[FakeServer]:
    state = FakeServer(embed, list(fail_with or []))

    class Handler(JsonHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
            )
            if state.fail_with:
                self._answer(state.fail_with.pop(0), {"error": "scripted failure"})
                return
            vectors = state.embed(body["input"])
            data = [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ]
            self._answer(200, {"object": "list", "data": data[::-1], "model": body["model"]})

        def _answer(self, status: int, body: dict[str, Any]) -> None:
            self.send_json(status, json.dumps(body).encode())

    with loopback_server(Handler) as base:
        state.url = f"{base}/v1"
        yield state


def _closed_port_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


def _wrong_model(texts: list[str]) -> list[list[float]]:
    return HashingEncoder().encode(texts)


def test_the_stored_probe_vector_is_the_local_models(minilm: MiniLMEncoder) -> None:
    assert cosine(minilm.encode([PROBE_SENTENCE])[0], reference_probe_vector()) > 0.99999


def test_remote_vectors_equal_the_local_ones_batched_and_in_order(minilm: MiniLMEncoder) -> None:
    texts = [f"document number {i} about topic {i % 3}" for i in range(5)]
    with embedding_server(minilm.encode) as server:
        encoder = RemoteEncoder(server.url, "all-minilm", "secret-key", batch_size=2)
        remote = encoder.encode(texts)
        encoder.close()
    local = minilm.encode(texts)
    assert [cosine(r, loc) for r, loc in zip(remote, local, strict=True)] == pytest.approx(
        [1.0] * 5, abs=1e-6
    )
    assert [len(r["body"]["input"]) for r in server.requests] == [2, 2, 1]
    assert {r["path"] for r in server.requests} == {"/v1/embeddings"}
    assert {r["body"]["model"] for r in server.requests} == {"all-minilm"}
    assert {r["auth"] for r in server.requests} == {"Bearer secret-key"}


def test_the_probe_accepts_the_same_model_and_rejects_another(minilm: MiniLMEncoder) -> None:
    with embedding_server(minilm.encode) as good:
        assert RemoteEncoder(good.url, "m").check_probe(reference_probe_vector()) > 0.999
    with (
        embedding_server(_wrong_model) as wrong,
        pytest.raises(EmbeddingMismatch, match=r"probe cosine -?0\.\d+ < 0\.999"),
    ):
        RemoteEncoder(wrong.url, "m").check_probe(reference_probe_vector())


def test_transient_failures_are_retried_then_bounded() -> None:
    with embedding_server(_wrong_model, fail_with=[503, 429]) as server:
        encoder = RemoteEncoder(server.url, "m", backoff_seconds=0.01)
        assert len(encoder.encode(["x"])) == 1
        assert len(server.requests) == 3
    with embedding_server(_wrong_model, fail_with=[502] * 10) as server:
        encoder = RemoteEncoder(server.url, "m", attempts=3, backoff_seconds=0.01)
        with pytest.raises(EmbeddingUnavailable, match="HTTP 502 after 3 attempts"):
            encoder.encode(["x"])
        assert len(server.requests) == 3


def test_configuration_errors_are_not_retried() -> None:
    with embedding_server(_wrong_model, fail_with=[401]) as server:
        with pytest.raises(EmbeddingServerError, match="HTTP 401"):
            RemoteEncoder(server.url, "m", backoff_seconds=0.01).encode(["x"])
        assert len(server.requests) == 1


def test_an_unreachable_server_is_unavailable() -> None:
    encoder = RemoteEncoder(_closed_port_url(), "m", attempts=2, backoff_seconds=0.01)
    with pytest.raises(EmbeddingUnavailable, match="ConnectError"):
        encoder.encode(["x"])


@contextmanager
def _app(data_dir: Path, url: str) -> Iterator[TestClient]:
    settings = Settings(data_dir=data_dir, jwt_secret=JWT_SECRET, embedding_url=url)
    app = create_app(settings, authenticator=Authenticator(JWT_SECRET, {}))
    with TestClient(app) as client:
        app.state.astrolabe.ready.wait(timeout=120)
        yield client


def test_the_service_indexes_and_searches_through_the_server(
    tmp_path: Path, minilm: MiniLMEncoder
) -> None:
    with embedding_server(minilm.encode) as server, _app(tmp_path, server.url) as client:
        status = client.get("/api/v1/status").json()
        assert status["embedding_model"] == "sentence-transformers/all-MiniLM-L6-v2"
        documents = [
            doc("1", "The cat sat on the warm windowsill all afternoon."),
            doc("2", "Quarterly revenue figures for the finance department."),
        ]
        response = client.post(
            "/api/v1/documents?wait=true", json={"documents": documents}, headers=auth()
        )
        assert response.status_code == 200, response.text
        found = client.post(
            "/api/v1/search",
            json={"query": "a kitten resting by the window", "algorithm": "semantic"},
            headers=auth(),
        ).json()
        assert found["results"][0]["doc_id"] == "1"
        inputs = [text for r in server.requests for text in r["body"]["input"]]
        assert PROBE_SENTENCE in inputs and "a kitten resting by the window" in inputs


def test_a_mismatched_server_stops_the_engine(tmp_path: Path) -> None:
    with embedding_server(_wrong_model) as server, _app(tmp_path, server.url) as client:
        ready = client.get("/readyz")
        assert ready.status_code == 503
        assert "probe cosine" in ready.json()["error"]


def test_serve_refuses_to_start_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("SEARCH_JWT_SECRET", JWT_SECRET)
    monkeypatch.setenv("SEARCH_DATA_DIR", str(tmp_path))
    with embedding_server(_wrong_model) as server:
        monkeypatch.setenv("SEARCH_EMBEDDING_URL", server.url)
        with pytest.raises(SystemExit) as stopped:
            cli.main(["serve", "--port", "1"])
    assert stopped.value.code == 2
    refusals = [line for line in capsys.readouterr().err.splitlines() if "refusing" in line]
    assert len(refusals) == 1
    assert refusals[0].startswith("refusing to start: the embedding server at http://127.0.0.1")
    assert refusals[0].endswith("or unset SEARCH_EMBEDDING_URL")
