"""A start does not wait for the slow part of opening the index: the engine answers (and
/readyz says 200) while the facet index is still being read back from the shard, as after an
unclean stop, and every search answered meanwhile is the one answered once it is loaded:
results, counts, facets and access rules alike."""

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.auth import Authenticator
from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.main import create_app
from app.store.engine import launch, supervisor
from app.store.engine.supervisor import Supervisor
from app.store.layout import IndexLayout
from tests.helpers import (
    JWT_SECRET,
    auth,
    doc,
    index,
    running_app_on_engine_processes,
    search,
)
from tests.store.engine.gated_child import GATE_ENV, MODULE, loaded, reached

TAGS = ("red", "blue", "green")
FOLDERS = ("/A", "/A/x", "/B")
# (user, groups, request) of every search compared
SEARCHES: list[tuple[str, list[str] | None, dict[str, Any]]] = [
    (user, groups, {"query": query, "include_facets": True, "limit": 20} | extra)
    for user, groups in (("alice", None), ("bob", ["eng"]), ("carol", []))
    for query in ("lantern garden", "")
    for extra in (
        {},
        {"tags": ["red"]},
        {"path_prefixes": ["/A"]},
        {"algorithm": "semantic", "tags_all": ["red", "blue"]},
        {"algorithm": "bm25", "owners": ["bob"]},
        {"granularity": "document", "modified_after": "2026-05-10"},
    )
]


def note(n: int) -> dict[str, Any]:
    return doc(
        f"n{n}",
        f"Lantern {n} glows in garden {n % 7}. " * (1 + n % 3),
        tags=[TAGS[n % 3], *(["blue"] if n % 5 == 0 else [])],
        owner=("alice", "bob", "carol")[n % 3],
        acl=["group:eng"] if n % 4 == 0 else [],
        file_path=f"{FOLDERS[n % 3]}/n{n}.md",
        modified_at=f"2026-05-{1 + n % 28:02d}T10:00:00Z",
    )


def answers(client: TestClient) -> list[dict[str, Any]]:
    """Each search's results (with their scores), totals and facets."""
    found = []
    for user, groups, body in SEARCHES:
        result = search(client, user, groups, **body)
        kept = ("results", "total_found", "strong_found", "facets", "filters")
        found.append({key: result[key] for key in kept})
    return found


@contextmanager
def app_on(engine: Supervisor, data_dir: Path) -> Iterator[TestClient]:
    """The app on `engine`, without waiting for it to be ready (unlike tests.helpers)."""
    app = create_app(
        Settings(data_dir=data_dir, jwt_secret=JWT_SECRET),
        authenticator=Authenticator(JWT_SECRET, {}),
        dense=HashingEncoder(),
        store=engine.store,
    )
    with TestClient(app) as client:
        yield client


def test_a_start_without_a_facet_snapshot_is_ready_before_its_facet_index_and_answers_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "data"
    with running_app_on_engine_processes(data_dir, HashingEncoder()) as (client, _):
        index(client, *[note(n) for n in range(40)])
        expected = answers(client)
    layout = IndexLayout.of(data_dir, Settings(data_dir=data_dir).collection)
    snapshot = IndexLayout.facet_snapshot(layout.current())
    snapshot.unlink()  # the disk as a kill -9 leaves it: the documents are read back
    gate = tmp_path / "gate"
    monkeypatch.setattr(launch, "CHILD_MODULE", MODULE)
    monkeypatch.setenv(GATE_ENV, str(gate))
    engine = Supervisor(Settings(data_dir=data_dir))
    try:
        engine.start()
        with app_on(engine, data_dir) as client:
            try:
                meanwhile = answers_while_loading(client, gate)
            finally:
                gate.touch()  # the app's exit waits for the engine, the engine for the gate
            _wait_for(loaded(gate))
            after = answers(client)
    finally:
        gate.touch()
        engine.close()
    assert meanwhile == expected
    assert after == expected


def test_after_a_kill_the_engine_answers_alike_while_it_reads_its_documents_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An engine killed after writes leaves no facet snapshot; the one started in its place
    answers before its facet index is read back, and exactly."""
    monkeypatch.setattr(supervisor, "POLL_S", 0.2)
    data_dir = tmp_path / "data"
    gate = tmp_path / "gate"
    with running_app_on_engine_processes(data_dir, HashingEncoder()) as (client, engine):
        index(client, *[note(n) for n in range(40)])
        index(client, *[note(n) | {"tags": ["green"]} for n in range(0, 40, 6)])
        response = client.delete("/api/v1/documents/note/n3", headers=auth())
        assert response.status_code in (200, 204), response.text
        expected = answers(client)
        served = engine._served
        assert served is not None
        monkeypatch.setattr(launch, "CHILD_MODULE", MODULE)  # the engine started in its place
        monkeypatch.setenv(GATE_ENV, str(gate))
        os.kill(served.process.pid, signal.SIGKILL)
        try:
            _wait_for(reached(gate))
            meanwhile = answers_while_loading(client, gate)
        finally:
            gate.touch()
        _wait_for(loaded(gate))
        after = answers(client)
    assert engine._served is not served
    assert meanwhile == expected
    assert after == expected


def answers_while_loading(client: TestClient, gate: Path) -> list[dict[str, Any]]:
    """Every search answered with the facet index's load held at `gate`, once ready."""
    state = client.app.state.astrolabe  # type: ignore[attr-defined]
    assert state.ready.wait(timeout=30), "not ready while the facet index loads"
    assert client.get("/readyz").status_code == 200
    assert reached(gate).exists() and not loaded(gate).exists()
    found = answers(client)
    assert not loaded(gate).exists()
    return found


def _wait_for(path: Path, timeout: float = 60) -> None:
    done = threading.Event()
    for _ in range(int(timeout / 0.05)):
        if path.exists():
            return
        done.wait(0.05)
    raise AssertionError(f"{path.name} never appeared")
