"""Server mode's cluster settings, start-up checks and transient-error handling, on qdrant-client's
local mode (no Qdrant server binary runs here) and on a closed loopback port."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from qdrant_client import QdrantClient
from qdrant_client.http import models
from qdrant_client.http.exceptions import UnexpectedResponse

from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.store import server as server_module
from app.store.base import Query
from app.store.cluster import CollectionLayout, CollectionMismatch
from app.store.errors import EngineFailed, EngineUnavailable
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR
from app.store.quantization import BEAM, OVERSAMPLING, QUANTILE
from app.store.retry import with_retries
from app.store.server import ServerStore
from bench.harness.loopback import JsonHandler, free_port, loopback_server
from tests.helpers import auth, doc, envelope, index, running_app

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")

CLUSTER = CollectionLayout(
    shard_number=6,
    replication_factor=2,
    write_consistency_factor=2,
    on_disk=True,
    quantization=True,
    hnsw_m=32,
    hnsw_ef_construct=256,
)


def test_settings_choose_the_layout() -> None:
    settings = Settings(
        qdrant_shard_number=6,
        qdrant_replication_factor=2,
        qdrant_write_consistency_factor=2,
        qdrant_on_disk=True,
        qdrant_quantization="int8",
        qdrant_hnsw_m=32,
        qdrant_hnsw_ef_construct=256,
    )
    assert CollectionLayout.from_settings(settings) == CLUSTER
    assert CollectionLayout.from_settings(Settings()) == CollectionLayout()


def test_the_layout_reaches_create_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    create = QdrantClient.create_collection

    def spy(self: QdrantClient, name: str, **arguments: Any) -> bool:
        seen.update(arguments)
        return create(self, name, **arguments)

    monkeypatch.setattr(QdrantClient, "create_collection", spy)
    store = ServerStore(":memory:", None, "c", layout=CLUSTER)
    assert (seen["shard_number"], seen["replication_factor"]) == (6, 2)
    assert (seen["write_consistency_factor"], seen["on_disk_payload"]) == (2, True)
    # What local mode keeps of it, read back from the collection:
    params = store._client.get_collection("c").config.params
    store.close()
    assert isinstance(params.vectors, dict)
    dense = params.vectors[DENSE_VECTOR]
    assert dense.on_disk is True
    assert dense.hnsw_config is not None
    assert (dense.hnsw_config.m, dense.hnsw_config.ef_construct) == (32, 256)
    assert isinstance(dense.quantization_config, models.ScalarQuantization)
    assert dense.quantization_config.scalar.type == models.ScalarType.INT8
    sparse = (params.sparse_vectors or {})[SPARSE_VECTOR]
    assert sparse.modifier == models.Modifier.IDF
    assert sparse.index is not None and sparse.index.on_disk is True


def test_quantized_dense_searches_rescore(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: dict[str, Any] = {}
    query_points = QdrantClient.query_points

    def spy(self: QdrantClient, name: str, **arguments: Any) -> Any:
        sent.update(arguments)
        return query_points(self, name, **arguments)

    monkeypatch.setattr(QdrantClient, "query_points", spy)
    store = ServerStore(":memory:", None, "c", layout=CLUSTER)
    dense = models.Prefetch(query=[0.1] * 384, using=DENSE_VECTOR, limit=5)
    sparse = models.Prefetch(
        query=models.SparseVector(indices=[1], values=[1.0]), using=SPARSE_VECTOR, limit=5
    )
    store.query(
        Query(query=models.RrfQuery(rrf=models.Rrf(k=60)), prefetch=[dense, sparse], limit=5)
    )
    store.close()
    dense_sent, sparse_sent = sent["prefetch"]
    assert dense_sent.params.quantization.rescore is True
    assert dense_sent.params.quantization.oversampling > 1
    assert sparse_sent.params is None
    assert str(sent["consistency"]) == str(models.ReadConsistencyType.MAJORITY)


def test_a_new_collection_is_quantized_and_searched_rescored_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As on the embedded engine (app/store/quantization.py). Local mode keeps the config but
    does not quantize: what it shows is that the parameters are sent and accepted."""
    sent: list[Any] = []
    query_batch_points = QdrantClient.query_batch_points

    def spy(self: QdrantClient, name: str, **arguments: Any) -> Any:
        sent.extend(arguments["requests"])
        return query_batch_points(self, name, **arguments)

    monkeypatch.setattr(QdrantClient, "query_batch_points", spy)
    store = ServerStore(":memory:", None, "c", layout=CollectionLayout.from_settings(Settings()))
    params = store._client.get_collection("c").config.params
    assert isinstance(params.vectors, dict)
    quantization = params.vectors[DENSE_VECTOR].quantization_config
    assert isinstance(quantization, models.ScalarQuantization)
    assert quantization.scalar.type == models.ScalarType.INT8
    assert (quantization.scalar.quantile, quantization.scalar.always_ram) == (QUANTILE, True)
    store.upsert([models.PointStruct(id=1, vector={DENSE_VECTOR: [1.0] + [0.0] * 383}, payload={})])
    nearest = models.NearestQuery(nearest=[1.0] + [0.0] * 383)
    answers = store.query_batch([Query(query=nearest, using=DENSE_VECTOR, limit=3)])
    store.close()
    assert [hit.id for hit in answers[0]] == ["1"]
    assert sent[0].params.quantization.rescore is True
    assert sent[0].params.quantization.oversampling == OVERSAMPLING
    assert sent[0].params.hnsw_ef == BEAM


def _existing(name: str, **arguments: Any) -> QdrantClient:
    client = QdrantClient(location=":memory:")
    good = CollectionLayout().create_collection_arguments()
    client.create_collection(name, **(good | arguments))
    return client


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (
            {
                "vectors_config": {
                    DENSE_VECTOR: models.VectorParams(size=768, distance=models.Distance.COSINE)
                }
            },
            "dense size 768, not 384",
        ),
        (
            {
                "vectors_config": {
                    DENSE_VECTOR: models.VectorParams(size=384, distance=models.Distance.DOT)
                }
            },
            "distance Dot, not Cosine",
        ),
        (
            {"sparse_vectors_config": {SPARSE_VECTOR: models.SparseVectorParams()}},
            "sparse modifier none, not idf",
        ),
        (
            {"vectors_config": models.VectorParams(size=384, distance=models.Distance.COSINE)},
            "no dense vector",
        ),
    ],
)
def test_an_existing_collection_for_other_vectors_stops_the_start(
    monkeypatch: pytest.MonkeyPatch, arguments: dict[str, Any], named: str
) -> None:
    client = _existing("c", **arguments)
    monkeypatch.setattr(server_module, "QdrantClient", lambda **_: client)
    with pytest.raises(CollectionMismatch) as stopped:
        ServerStore(":memory:", None, "c")
    message = str(stopped.value)
    assert named in message and "\n" not in message
    assert message.startswith("collection 'c' was made for other vectors")


def test_an_existing_compatible_collection_is_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    client = _existing("c")
    client.upsert("c", [models.PointStruct(id=1, vector={}, payload={"kind": "chunk"})])
    monkeypatch.setattr(server_module, "QdrantClient", lambda **_: client)
    store = ServerStore(":memory:", None, "c", layout=CLUSTER)
    assert store.count() == 1
    store.close()


class Flaky:
    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "answer"


def _unexpected(status: int) -> UnexpectedResponse:
    return UnexpectedResponse(status, "reason", b"{}", httpx.Headers())


def test_transient_errors_are_retried_a_bounded_number_of_times() -> None:
    flaky = Flaky(httpx.ConnectError("refused"), _unexpected(503))
    assert with_retries(flaky, attempts=3, backoff_seconds=0.001) == "answer"
    assert flaky.calls == 3
    down = Flaky(*[httpx.ConnectError("refused")] * 5)
    with pytest.raises(httpx.ConnectError):
        with_retries(down, attempts=3, backoff_seconds=0.001)
    assert down.calls == 3


def test_other_errors_are_not_retried() -> None:
    for error in (_unexpected(400), ValueError("bad request")):
        flaky = Flaky(error)
        with pytest.raises(type(error)):
            with_retries(flaky, attempts=3, backoff_seconds=0.001)
        assert flaky.calls == 1


@contextmanager
def failing_qdrant(status: int) -> Iterator[str]:
    """A loopback server answering every request like a Qdrant that fails with `status`."""

    class Handler(JsonHandler):
        def _fail(self) -> None:
            raw = json.dumps({"status": {"error": "secret internals"}, "time": 0.0}).encode()
            self.send_json(status, raw)

        do_GET = do_POST = do_PUT = _fail

    with loopback_server(Handler) as base:
        yield base


def test_an_unreachable_server_stops_the_start_with_one_line() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nobody listens on it
    with pytest.raises(EngineUnavailable) as stopped:
        ServerStore(url, None, "c", timeout=2)
    assert str(stopped.value).startswith(f"cannot reach Qdrant at {url}")
    assert "\n" not in str(stopped.value)


def test_an_error_answered_by_qdrant_is_a_502_without_its_words(tmp_path: Path) -> None:
    with failing_qdrant(500) as url:
        with pytest.raises(EngineFailed):
            ServerStore(url, None, "c", timeout=2)
        with running_app(tmp_path, HashingEncoder(), qdrant_url=":memory:") as client:
            index(client, doc("1", "comet"))
            store = client.app.state.astrolabe.services.store  # type: ignore[attr-defined]
            store._client = QdrantClient(url=url, timeout=2, check_compatibility=False)
            response = client.post("/api/v1/search", json={"query": "comet"}, headers=auth())
            message = envelope(response, 502, "engine_failed")
            assert "secret" not in message and "127.0.0.1" not in message


def test_a_qdrant_that_stays_overloaded_is_a_503_after_bounded_retries(tmp_path: Path) -> None:
    with failing_qdrant(503) as url, pytest.raises(EngineUnavailable):
        ServerStore(url, None, "c", timeout=2)
