"""A 202 is a promise: documents accepted by a service killed with SIGKILL before it embedded
them are indexed after a restart. Runs the real `serve` command in a subprocess."""

import json
import signal
import time
from pathlib import Path
from typing import Any

import httpx

from tests.helpers import start_serve

KEY = "crash-test-key"
DOCS = [
    {
        "doc_type": "note",
        "doc_id": f"c{i}",
        "title": f"Crash note {i}",
        "content": " ".join(f"Sentence {j} of the long crash note {i}." for j in range(100)),
        "owner": "dev",
    }
    for i in range(30)
]


def _status(base: str) -> dict[str, Any]:
    response = httpx.get(f"{base}/api/v1/status", timeout=10)
    result: dict[str, Any] = response.json()
    return result


def test_accepted_documents_survive_sigkill(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({KEY: {"sub": "dev", "scope": "search index"}}))
    data_dir = tmp_path / "data"
    headers = {"Authorization": f"Bearer {KEY}"}
    first, base = start_serve(data_dir, keys)
    try:
        accepted = httpx.post(
            f"{base}/api/v1/documents", json={"documents": DOCS}, headers=headers, timeout=30
        )
        assert accepted.status_code == 202
        pending_when_killed = _status(base)["pending"]
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    assert pending_when_killed > 0, "everything was indexed before the kill: nothing was tested"
    second, base = start_serve(data_dir, keys)
    try:
        deadline = time.monotonic() + 300
        while _status(base)["pending"] and time.monotonic() < deadline:
            time.sleep(0.5)
        status = _status(base)
        assert (status["documents"], status["pending"], status["failed"]) == (30, 0, 0)
        found = httpx.post(
            f"{base}/api/v1/search", json={"query": "", "limit": 100}, headers=headers, timeout=30
        ).json()
        assert found["total_found"] == 30
    finally:
        second.terminate()
        second.wait(timeout=30)
