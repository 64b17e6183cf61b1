"""Shared test helpers: a running app on a temp data dir, tokens, documents."""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jwt
from fastapi.testclient import TestClient

from app.auth import Authenticator, Principal
from app.config import Settings
from app.embeddings.dense import DenseEncoder
from app.main import create_app

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
    **settings: Any,
) -> Iterator[TestClient]:
    """The real app on the real embedded engine in `data_dir`, ready to answer."""
    app = create_app(
        Settings(data_dir=data_dir, jwt_secret=JWT_SECRET, **settings),
        authenticator=Authenticator(JWT_SECRET, dict(api_keys or {})),
        dense=dense,
    )
    with TestClient(app) as client:
        app.state.astrolabe.ready.wait(timeout=120)
        yield client


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
