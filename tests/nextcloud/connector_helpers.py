"""The service with its Nextcloud connector pointed at the dialect, and ways to wait for it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.embeddings.dense import HashingEncoder
from app.nextcloud.connector import Connector
from tests.helpers import auth, running_app
from tests.nextcloud.server import NextcloudDialect

SECRET_KEY = "a-secret-key-for-the-tests-0123456789"
WEBHOOK_SECRET = "webhook-secret-for-the-tests"


@contextmanager
def connected_service(
    data_dir: Path, nc: NextcloudDialect, **settings: Any
) -> Iterator[TestClient]:
    """The app (real embedded engine, hashing embedder) with the connector on the dialect.
    Its ticks come only when a test asks (the interval is an hour)."""
    values: dict[str, Any] = {
        "nextcloud_url": nc.url,
        "secret_key": SECRET_KEY,
        "nextcloud_webhook_secret": WEBHOOK_SECRET,
        "nextcloud_interval": 3600.0,
        "nextcloud_shares_interval": 3600.0,
        **settings,
    }
    with running_app(data_dir, HashingEncoder(), **values) as client:
        yield client


def connector_of(client: TestClient) -> Connector:
    app = cast(FastAPI, client.app)
    connector = app.state.astrolabe.require_services().connector
    assert connector is not None
    return cast(Connector, connector)


def connect(
    client: TestClient, nc: NextcloudDialect, uid: str, password: str | None = None
) -> dict[str, Any]:
    """Connect uid (with a new app password unless one is given) and wait for the first tick."""
    login = nc.world.users[uid].login
    response = client.post(
        "/api/v1/nextcloud/users",
        json={"login_name": login, "app_password": password or nc.app_password(uid)},
        headers=auth("admin"),
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    settle(client, body["user_id"], forced=False)
    return body


def users(client: TestClient) -> dict[str, dict[str, Any]]:
    response = client.get("/api/v1/nextcloud/users", headers=auth("admin"))
    assert response.status_code == 200, response.text
    return {line["user_id"]: line for line in response.json()["users"]}


def settle(client: TestClient, uid: str, forced: bool = True, timeout: float = 60) -> None:
    """Force a tick of uid's sync (unless one is already coming) and wait until it ended and
    the index has nothing waiting."""
    before = users(client).get(uid, {}).get("last_tick") if forced else None
    if forced:
        response = client.post(
            "/api/v1/nextcloud/sync", json={"user_id": uid}, headers=auth("admin")
        )
        assert response.status_code == 202, response.text
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = users(client).get(uid, {})
        ticked = line.get("last_tick") is not None and line.get("last_tick") != before
        status = client.get("/api/v1/vector-sync/status", headers=auth("admin")).json()
        if ticked and line.get("pending") == 0 and status["status"] == "idle":
            return
        time.sleep(0.05)
    raise AssertionError(f"{uid}'s sync did not settle: {users(client).get(uid)}")


def found(
    client: TestClient, query: str, user: str, groups: list[str] | None = None, **body: Any
) -> list[dict[str, Any]]:
    response = client.post(
        "/api/v1/search",
        json={"query": query, "algorithm": "bm25", **body},
        headers=auth(user, groups),
    )
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results
