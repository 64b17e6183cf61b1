"""Shared test helpers: a running app on a temp data dir, tokens, documents."""

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import httpx
import jwt
import pytest
from fastapi.testclient import TestClient

from app.auth import Authenticator, Principal
from app.config import Settings
from app.embeddings.dense import DenseEncoder, HashingEncoder
from app.main import create_app
from app.store.base import Store
from app.store.engine.supervisor import Supervisor
from bench.harness.loopback import free_port

JWT_SECRET = "test-secret-that-is-long-enough-for-hs256"
BOTH = "search index"


def token(user: str, groups: list[str] | None = None, scope: str = BOTH, ttl: int = 600) -> str:
    claims: dict[str, Any] = {"sub": user, "exp": int(time.time()) + ttl, "scope": scope}
    if groups is not None:
        claims["groups"] = groups
    return jwt.encode(claims, JWT_SECRET, algorithm="HS256")


def auth(user: str = "alice", groups: list[str] | None = None, scope: str = BOTH) -> dict[str, str]:
    return {"Authorization": f"Bearer {token(user, groups, scope)}"}


def doc(doc_id: str, content: str = "", **fields: Any) -> dict[str, Any]:
    """A valid document; any field may be overridden."""
    base: dict[str, Any] = {
        "doc_type": "note",
        "doc_id": doc_id,
        "title": f"Document {doc_id}",
        "content": content or f"Plain text of document {doc_id}.",
        "owner": "alice",
        "modified_at": "2026-05-04T10:00:00Z",
    }
    return base | fields


@contextmanager
def running_app(
    data_dir: Path,
    dense: DenseEncoder,
    api_keys: dict[str, Principal] | None = None,
    store: Store | None = None,
    **settings: Any,
) -> Iterator[TestClient]:
    """The real app on the real embedded engine in `data_dir` (in this process unless a
    `store` is given), ready to answer."""
    app = create_app(
        Settings(data_dir=data_dir, jwt_secret=JWT_SECRET, **settings),
        authenticator=Authenticator(JWT_SECRET, dict(api_keys or {})),
        dense=dense,
        store=store,
    )
    with TestClient(app) as client:
        app.state.astrolabe.ready.wait(timeout=120)
        yield client


@contextmanager
def running_app_on_engine_processes(
    data_dir: Path, dense: DenseEncoder
) -> Iterator[tuple[TestClient, Supervisor]]:
    """The app as `serve` runs it: the embedded engine in processes of its own."""
    engine = Supervisor(Settings(data_dir=data_dir))
    try:
        with running_app(data_dir, dense, store=engine.start()) as client:
            yield client, engine
    finally:
        engine.close()


def index(client: TestClient, *documents: dict[str, Any], user: str = "alice") -> dict[str, Any]:
    response = client.post(
        "/api/v1/documents?wait=true", json={"documents": list(documents)}, headers=auth(user)
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def search(
    client: TestClient, user: str = "alice", groups: list[str] | None = None, **body: Any
) -> dict[str, Any]:
    response = client.post("/api/v1/search", json=body, headers=auth(user, groups))
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def ids(result: dict[str, Any]) -> list[str]:
    return [r["doc_id"] for r in result["results"]]


# --- filter and search helpers over HTTP ----------------------------------------------------

MAY_4 = 1_777_888_800  # 2026-05-04T10:00:00Z
DAY = 86_400
LONG = " ".join(f"Sentence {i} is about the lantern in the garden." for i in range(70))
ALGORITHMS = ("hybrid", "semantic", "bm25")
# (algorithm, granularity, query): every ranked mode, and browse (empty query).
MODES = [(a, g, "lantern garden") for a in ALGORITHMS for g in ("chunk", "document")] + [
    ("hybrid", "chunk", ""),
    ("hybrid", "document", ""),
]


def post_search(
    client: TestClient, user: str = "alice", groups: list[str] | None = None, **body: Any
) -> tuple[int, dict[str, Any]]:
    response = client.post("/api/v1/search", json=body, headers=auth(user, groups))
    payload: dict[str, Any] = response.json()
    return response.status_code, payload


def viz(
    client: TestClient, user: str = "alice", groups: list[str] | None = None, **params: Any
) -> tuple[int, dict[str, Any]]:
    response = client.get("/viz/search", params=params, headers=auth(user, groups))
    payload: dict[str, Any] = response.json()
    return response.status_code, payload


def browse(client: TestClient, user: str = "alice", **filters: Any) -> list[str]:
    """Sorted ids of every matching document (browse mode)."""
    return sorted(ids(search(client, user=user, query="", limit=100, **filters)))


def shared_app(
    tmp_path_factory: pytest.TempPathFactory, *documents: dict[str, Any]
) -> Iterator[TestClient]:
    """One app with a fixed corpus for a module's read-only tests (starting one costs I/O)."""
    with running_app(tmp_path_factory.mktemp("shared"), HashingEncoder()) as shared:
        index(shared, *documents)
        yield shared


def assert_invalid(status: int, body: dict[str, Any], field: str) -> None:
    assert status == 400, body
    assert body["error"]["code"] == "invalid_request"
    assert body["error"]["field"] == field
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def facets(client: TestClient, groups: list[str] | None = None, **body: Any) -> dict[str, Any]:
    result = search(client, groups=groups, include_facets=True, **body)
    value: dict[str, Any] = result["facets"]
    return value


class Response(Protocol):
    """What the assertions read of a TestClient response (httpx or httpx2)."""

    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...

    def json(self) -> Any: ...


def envelope(response: Response, status: int, code: str, field: str | None = None) -> str:
    """Asserts the exact error envelope (docs/api.md) and returns its message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "field"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["field"] == field, body
    message = body["error"]["message"]
    assert isinstance(message, str) and message, body
    return message


def start_serve(data_dir: Path, keys: Path, **env: str) -> tuple[subprocess.Popen[bytes], str]:
    """The real `serve` command in a subprocess on a free loopback port, once /readyz is 200;
    its log goes to `serve.log` beside the data directory."""
    port = free_port()
    environ = os.environ | {"SEARCH_DATA_DIR": str(data_dir), "SEARCH_API_KEYS_FILE": str(keys)}
    with (data_dir.parent / "serve.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port)],
            env=environ | env,
            cwd=data_dir.parent,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    with httpx.Client(
        timeout=1
    ) as client:  # one SSL context, not one a poll (bench.harness.service)
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if client.get(f"{base}/readyz").status_code == 200:
                    return process, base
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
    process.kill()
    process.wait()
    raise AssertionError("serve did not become ready")
