"""The store's error seam: engine and client failures leave the store typed, and the HTTP
status follows from the error class (503 `engine_unavailable`, 500 `engine_error` without the
engine's words)."""

from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient

from app.embeddings.dense import HashingEncoder
from app.errors import ServiceError, Unavailable
from app.store.edge import EdgeStore
from app.store.errors import EngineUnavailable, IndexConflict, StoreError
from app.store.translate import UntranslatableError
from bench.harness.loopback import free_port
from tests.helpers import auth, doc, envelope, index, running_app
from tests.store.test_congruence import server_store


def dead_url() -> str:
    """A local port nothing listens on: connections are refused at once."""
    return f"http://127.0.0.1:{free_port()}"


class BrokenShard:
    """Stands in for a Qdrant Edge shard whose every call fails."""

    def __getattr__(self, name: str) -> Any:
        def fail(*args: object, **kwargs: object) -> None:
            raise RuntimeError("disk full at /secret/path")

        return fail


def test_the_status_of_each_store_error_follows_from_its_class() -> None:
    assert issubclass(EngineUnavailable, Unavailable) and EngineUnavailable.status_code == 503
    assert (StoreError.status_code, StoreError.code) == (500, "engine_error")
    assert EngineUnavailable("x").response().status_code == 503
    for error in (IndexConflict, UntranslatableError):
        assert issubclass(error, StoreError) and issubclass(error, ServiceError)


def test_an_unreachable_server_is_engine_unavailable() -> None:
    store = server_store()
    store._client = QdrantClient(url=dead_url(), timeout=2, check_compatibility=False)
    with pytest.raises(EngineUnavailable):
        store.count()
    with pytest.raises(EngineUnavailable):
        store.retrieve(["00000000-0000-0000-0000-000000000001"])


def test_an_engine_failure_is_a_store_error_naming_the_call(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path, "t")
    shard = store._shard
    store._shard = BrokenShard()  # type: ignore[assignment]
    try:
        with pytest.raises(StoreError, match=r"EdgeStore\.count: RuntimeError"):
            store.count()
    finally:
        store._shard = shard
        store.close()


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect")
def test_search_on_an_unreachable_server_is_503(tmp_path: Path) -> None:
    with running_app(tmp_path, HashingEncoder(), qdrant_url=":memory:") as client:
        index(client, doc("1", "comet"))
        store = client.app.state.astrolabe.services.store  # type: ignore[attr-defined]
        store._client = QdrantClient(url=dead_url(), timeout=2, check_compatibility=False)
        response = client.post("/api/v1/search", json={"query": "comet"}, headers=auth())
        message = envelope(response, 503, "engine_unavailable")
        assert "127.0.0.1" not in message


def test_an_engine_failure_is_500_without_its_words(tmp_path: Path) -> None:
    with running_app(tmp_path, HashingEncoder()) as client:
        index(client, doc("1", "comet"))
        store = client.app.state.astrolabe.services.store  # type: ignore[attr-defined]
        shard, store._shard = store._shard, BrokenShard()
        try:
            response = client.post("/api/v1/search", json={"query": "comet"}, headers=auth())
            message = envelope(response, 500, "engine_error")
            assert "secret" not in message
        finally:
            store._shard = shard
