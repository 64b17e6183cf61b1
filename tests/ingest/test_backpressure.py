"""Backpressure: past SEARCH_MAX_PENDING queued documents, ingest answers 429 with Retry-After
and the envelope, writes nothing, and accepts again once the indexer caught up; the status shows
the queue depth and the indexing rate."""

import threading
import time
from collections.abc import Sequence
from pathlib import Path

from app.embeddings.dense import HashingEncoder
from tests.helpers import auth, doc, running_app


class GatedEncoder(HashingEncoder):
    """The hashing embedder, held until the test opens the gate: keeps the queue full."""

    def __init__(self) -> None:
        self.gate = threading.Event()

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        self.gate.wait(timeout=60)
        return super().encode(texts)


def test_a_full_queue_answers_429_and_accepts_again_once_drained(tmp_path: Path) -> None:
    encoder = GatedEncoder()
    with running_app(tmp_path, encoder, max_pending=5) as client:

        def post(*ids: str) -> int:
            documents = [doc(i) for i in ids]
            response = client.post(
                "/api/v1/documents", json={"documents": documents}, headers=auth()
            )
            return response.status_code

        assert post("a", "b", "c") == 202
        status = client.get("/api/v1/status").json()
        assert (status["queue_depth"], status["max_pending"]) == (3, 5)
        refused = client.post(
            "/api/v1/documents", json={"documents": [doc("d"), doc("e")] * 2}, headers=auth()
        )
        assert refused.status_code == 429
        assert int(refused.headers["Retry-After"]) >= 1
        assert refused.json()["error"]["code"] == "queue_full"
        assert client.get("/api/v1/documents/note/d", headers=auth()).status_code == 404
        assert post("d", "e") == 202  # exactly up to the bound
        encoder.gate.set()
        deadline = time.monotonic() + 30
        while client.get("/api/v1/status").json()["queue_depth"] and time.monotonic() < deadline:
            time.sleep(0.05)
        status = client.get("/api/v1/status").json()
        assert (status["queue_depth"], status["documents"], status["pending"]) == (0, 5, 0)
        assert status["indexing_rate"] > 0
        assert post("f", "g", "h") == 202


def test_a_batch_larger_than_the_bound_is_refused_whole(tmp_path: Path) -> None:
    with running_app(tmp_path, HashingEncoder(), max_pending=2) as client:
        refused = client.post(
            "/api/v1/documents",
            json={"documents": [doc("a"), doc("b"), doc("c")]},
            headers=auth(),
        )
        assert refused.status_code == 429
        assert client.get("/api/v1/status").json()["pending"] == 0
