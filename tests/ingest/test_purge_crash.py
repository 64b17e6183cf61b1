"""A purge interrupted by SIGKILL: the real `serve` in a subprocess, made to pause after its
first doc type is deleted (a `sitecustomize` on its PYTHONPATH slows that one method; the code
is the shipped code), killed in that pause, started again. Every document must be fully present
or fully gone at every step, and the restart must finish the purge."""

import contextlib
import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.helpers import start_serve

KEY = "purge-crash-key"
HEADERS = {"Authorization": f"Bearer {KEY}"}
TYPES = [f"type{i}" for i in range(20)]
PER_TYPE = 2
CHUNKS = 2  # each document: a placeholder, then two chunks
PAUSE = """
import time
from app.ingest.pipeline import Indexer

_delete_where = Indexer.delete_where


def _slow_delete_where(self, selector):
    _delete_where(self, selector)
    time.sleep(30)  # the test kills the service in here, after the first doc type


Indexer.delete_where = _slow_delete_where
"""


def _documents() -> list[dict[str, Any]]:
    long = " ".join(f"Sentence {j} about the harbour and its boats." for j in range(40))
    return [
        {"doc_type": t, "doc_id": str(i), "owner": "dev", "content": long}
        for t in TYPES
        for i in range(PER_TYPE)
    ]


def _present(base: str) -> dict[str, set[str]]:
    """Per doc type, the documents there; each must be whole (every chunk, nothing pending)."""
    present: dict[str, set[str]] = {t: set() for t in TYPES}
    for t in TYPES:
        for i in range(PER_TYPE):
            response = httpx.get(f"{base}/api/v1/documents/{t}/{i}", headers=HEADERS, timeout=10)
            if response.status_code == 404:
                continue
            status = response.json()
            assert (status["status"], status["chunks"]) == ("indexed", CHUNKS), (t, i, status)
            present[t].add(str(i))
    return present


def test_a_purge_killed_midway_is_whole_per_document_and_finished_at_restart(
    tmp_path: Path,
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({KEY: {"sub": "dev", "scope": "search index"}}))
    patch = tmp_path / "patch"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(PAUSE)
    data_dir = tmp_path / "data"
    documents = _documents()
    first, base = start_serve(data_dir, keys, PYTHONPATH=str(patch))
    try:
        for start in range(0, len(documents), 64):
            batch = {"documents": documents[start : start + 64]}
            sent = httpx.post(
                f"{base}/api/v1/documents?wait=true", json=batch, headers=HEADERS, timeout=300
            )
            assert sent.status_code == 200, sent.text
        purge = threading.Thread(
            target=lambda: _quietly_post(f"{base}/api/v1/vector-sync/purge", {"doc_types": TYPES})
        )
        purge.start()
        deadline = time.monotonic() + 60
        while _count(base, TYPES[0]) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the first doc type is gone: the pause has begun
        midway = _present(base)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    purge.join(timeout=30)
    assert midway[TYPES[0]] == set(), "the first doc type was never deleted: nothing was tested"
    assert all(len(midway[t]) == PER_TYPE for t in TYPES[1:]), midway  # the pause held
    second, base = start_serve(data_dir, keys)
    try:
        after = _present(base)
        status = httpx.get(f"{base}/api/v1/vector-sync/status", headers=HEADERS, timeout=10)
        assert status.json()["indexed_documents"] == 0
    finally:
        second.terminate()
        second.wait(timeout=30)
    assert after == {t: set() for t in TYPES}
    assert "finishing a purge" in (tmp_path / "serve.log").read_text()


def _count(base: str, doc_type: str) -> int:
    body = {"query": "", "doc_types": [doc_type], "limit": 1}
    found = httpx.post(f"{base}/api/v1/search", json=body, headers=HEADERS, timeout=10)
    total: int = found.json()["total_found"]
    return total


def _quietly_post(url: str, body: dict[str, Any]) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the service is killed while this waits
        httpx.post(url, json=body, headers=HEADERS, timeout=60)
