"""SIGTERM: the service stops accepting, answers what is in flight, stops the indexer between
documents and exits within seconds, however long the ingest queue; the documents it left pending
are indexed after the next start. Runs the real `serve` command in a subprocess."""

import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.helpers import start_serve

KEY = "shutdown-test-key"
HEADERS = {"Authorization": f"Bearer {KEY}"}
DOCS = [
    {
        "doc_type": "note",
        "doc_id": f"s{i}",
        "title": f"Shutdown note {i}",
        "content": " ".join(f"Sentence {j} of the long shutdown note {i}." for j in range(60)),
        "owner": "dev",
    }
    for i in range(120)
]


def _status(base: str) -> dict[str, Any]:
    result: dict[str, Any] = httpx.get(f"{base}/api/v1/status", timeout=10).json()
    return result


def test_sigterm_exits_within_seconds_and_pending_documents_resume(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({KEY: {"sub": "dev", "scope": "search index"}}))
    data_dir = tmp_path / "data"
    first, base = start_serve(data_dir, keys)
    in_flight: list[httpx.Response] = []
    try:
        accepted = httpx.post(
            f"{base}/api/v1/documents", json={"documents": DOCS}, headers=HEADERS, timeout=30
        )
        assert accepted.status_code == 202
        last = {**DOCS[0], "doc_id": "waited"}

        def wait_for_indexing() -> None:
            in_flight.append(
                httpx.post(
                    f"{base}/api/v1/documents?wait=true",
                    json={"documents": [last]},
                    headers=HEADERS,
                    timeout=60,
                )
            )

        waiter = threading.Thread(target=wait_for_indexing)
        waiter.start()
        time.sleep(1.0)  # the waiting request is in flight, behind the queue
        assert _status(base)["pending"] > 20, "the queue drained already: nothing was tested"
        started = time.monotonic()
        first.send_signal(signal.SIGTERM)
        code = first.wait(timeout=60)
        took = time.monotonic() - started
        waiter.join(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    # a drained queue takes minutes here; the slice being embedded, seconds (on a busy machine)
    assert took < 15, f"SIGTERM took {took:.1f} s"
    assert code in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it is done
    # the request in flight was answered, with the envelope, not cut
    assert len(in_flight) == 1
    if in_flight[0].status_code != 200:
        assert in_flight[0].status_code == 503
        assert in_flight[0].json()["error"]["code"] == "shutting_down"
    second, base = start_serve(data_dir, keys)
    try:
        status = _status(base)
        assert status["documents"] + status["pending"] == len(DOCS) + 1  # nothing lost
        assert status["failed"] == 0
        left = status["pending"]
        assert left > 0, "the stop drained the queue: nothing was tested"
        deadline = time.monotonic() + 120
        while _status(base)["pending"] == left and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _status(base)["pending"] < left  # the pending documents resume
    finally:
        second.terminate()
        second.wait(timeout=30)
