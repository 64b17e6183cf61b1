"""A kill -9 of `serve` at every step of a handover (app/store/engine/supervisor.py names them)
leaves an index the next start serves whole: every accepted document (202) indexed, counts and
facets exact, and one shard generation on disk. Runs the real `serve` command, each start
recovering from the previous kill and feeding documents until a rebuild reaches the next step."""

import json
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from app.store.layout import IndexLayout
from tests.helpers import start_serve

KEY = "handover-test-key"
HEADERS = {"Authorization": f"Bearer {KEY}"}
STEPS = ["copied", "caught_up", "sealed", "finished", "switched", "retired"]
SWITCHED = {"switched", "retired"}  # index.json names the rebuilt copy from there on
TAGS = ("red", "blue", "green")


def note(n: int) -> dict[str, Any]:
    return {
        "doc_type": "note",
        "doc_id": f"h{n}",
        "title": f"Handover note {n}",
        "content": f"Lantern {n} glows in garden {n % 7}.",
        "owner": "dev",
        "tags": [TAGS[n % 3]],
    }


def present(base: str, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documents of a batch whose answer the kill cut off that the index has."""
    return [
        d
        for d in batch
        if httpx.get(f"{base}/api/v1/documents/note/{d['doc_id']}", headers=HEADERS).status_code
        == 200
    ]


def assert_whole(base: str, accepted: list[dict[str, Any]]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = httpx.get(f"{base}/api/v1/status").json()
        if not status["pending"]:
            break
        time.sleep(0.2)
    assert (status["documents"], status["pending"], status["failed"]) == (len(accepted), 0, 0)
    found = httpx.post(
        f"{base}/api/v1/search",
        json={"query": "", "include_facets": True, "limit": 1},
        headers=HEADERS,
    ).json()
    assert found["total_found"] == len(accepted)
    assert found["facets"]["tags"] == dict(Counter(d["tags"][0] for d in accepted))


def feed_until_killed(
    base: str, start: int, process: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """Documents sent until the process dies: the accepted ones (202), the batch the kill cut
    off (it may or may not have been accepted) and the next number."""
    accepted: list[dict[str, Any]] = []
    n = start
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        batch = [note(i) for i in range(n, n + 10)]
        n += 10
        try:
            answer = httpx.post(
                f"{base}/api/v1/documents", json={"documents": batch}, headers=HEADERS, timeout=10
            )
        except httpx.HTTPError:
            return accepted, batch, n
        if answer.status_code == 202:
            accepted += batch
        time.sleep(0.05)
    return accepted, [], n


def test_a_kill_at_every_step_of_a_handover_loses_nothing(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({KEY: {"sub": "dev", "scope": "search index"}}))
    data_dir = tmp_path / "data"
    layout = IndexLayout.of(data_dir, "astrolabe")
    accepted: list[dict[str, Any]] = []
    cut_off: list[dict[str, Any]] = []
    n = 0
    for step in [*STEPS, None]:
        env = {"SEARCH_HNSW_THRESHOLD": "20"} | ({"ASTROLABE_FAILPOINT": step} if step else {})
        process, base = start_serve(data_dir, keys, **env)
        try:
            accepted += present(base, cut_off)
            assert_whole(base, accepted)
            if step is None:
                break
            served = layout.current()
            more, cut_off, n = feed_until_killed(base, n, process)
            accepted += more
            assert process.wait(timeout=120) == -signal.SIGKILL, f"never reached {step}"
            assert (layout.current() != served) == (step in SWITCHED), step
        finally:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=60)
    shards = [p.name for p in layout.root.iterdir() if p.is_dir()]
    assert shards == [layout.current().name]
    assert layout.current().name != "shard-000001"  # handovers did happen
