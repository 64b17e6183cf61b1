"""Backups of the running service (`serve`, its engine in processes of its own) through
`astrolabe-search backup --url`: taken while documents arrive, restored into a new directory
with the counts of the backup's moment and the same answers to twenty searches; a kill -9 of the
command mid-transfer leaves a directory `restore` refuses and the live index as it was."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.backup.manifest import MANIFEST, Counts, Manifest
from app.backup.restore import restore
from app.config import Settings
from app.embeddings.dense import MiniLMEncoder
from app.store.edge import EdgeStore
from tests.backup.common import answers, note
from tests.backup.test_roundtrip import searcher
from tests.helpers import running_app, start_serve

KEY = "backup-test-key"
HEADERS = {"Authorization": f"Bearer {KEY}"}
NOTES = 30


class Service:
    def __init__(self, process: subprocess.Popen[bytes], base: str, data: Path) -> None:
        self.process, self.base, self.data = process, base, data

    def search(self, body: dict[str, Any]) -> dict[str, Any]:
        response = httpx.post(f"{self.base}/api/v1/search", json=body, headers=HEADERS, timeout=60)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    def status(self) -> dict[str, Any]:
        result: dict[str, Any] = httpx.get(f"{self.base}/api/v1/status", timeout=60).json()
        return result

    def backup(self, dest: Path, **env: str) -> subprocess.CompletedProcess[str]:
        environ = os.environ | {"SEARCH_SERVICE_URL": self.base, "SEARCH_SERVICE_TOKEN": KEY}
        return subprocess.run(
            [sys.executable, "-m", "app", "backup", str(dest)],
            env=environ | env,
            capture_output=True,
            text=True,
            timeout=300,
        )


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Any]]:
    """`serve` holding NOTES notes, and its answers to the twenty searches."""
    root = tmp_path_factory.mktemp("serve")
    keys = root / "keys.json"
    keys.write_text(json.dumps({KEY: {"sub": "alice", "scope": "search index"}}))
    process, base = start_serve(root / "data", keys)
    running = Service(process, base, root / "data")
    try:
        response = httpx.post(
            f"{base}/api/v1/documents?wait=true",
            json={"documents": [note(n) for n in range(NOTES)]},
            headers=HEADERS,
            timeout=300,
        )
        assert response.status_code == 200, response.text
        yield running, answers(running.search)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)


class Feeder(threading.Thread):
    """Sends files, five a request, until stopped; counts the accepted ones."""

    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base = base
        self.accepted = 0
        self.stop = threading.Event()

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            batch = [note(n + k, "file") for k in range(5)]
            n += 5
            response = httpx.post(
                f"{self.base}/api/v1/documents",
                json={"documents": batch},
                headers=HEADERS,
                timeout=60,
            )
            assert response.status_code == 202, response.text
            self.accepted += len(batch)

    def wait_for(self, accepted: int) -> None:
        deadline = time.monotonic() + 120
        while self.accepted < accepted and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.accepted >= accepted


def test_a_backup_during_ingest_restores_the_moment_it_was_taken(
    service: tuple[Service, Any], tmp_path: Path, minilm: MiniLMEncoder
) -> None:
    running, expected = service
    feeder = Feeder(running.base)
    feeder.start()
    try:
        feeder.wait_for(10)
        done = running.backup(tmp_path / "backup")
        assert done.returncode == 0, done.stderr
        at_backup = feeder.accepted
        feeder.wait_for(at_backup + 10)
    finally:
        feeder.stop.set()
        feeder.join()
    manifest = Manifest.read(tmp_path / "backup")
    files = manifest.counts.documents + manifest.counts.pending + manifest.counts.failed - NOTES
    assert 0 < files <= at_backup < feeder.accepted, "the backup was not taken during ingest"
    restore(tmp_path / "backup", Settings(data_dir=tmp_path / "restored"))
    restored = EdgeStore(tmp_path / "restored", "astrolabe", facet_index=False)
    try:
        assert Counts.of(restored) == manifest.counts
    finally:
        restored.close()
    with running_app(tmp_path / "restored", minilm) as client:
        assert answers(searcher(client)) == expected
    assert answers(running.search) == expected  # the live index: the same notes


def test_a_kill_9_mid_transfer_leaves_no_whole_backup_and_the_index_untouched(
    service: tuple[Service, Any], tmp_path: Path
) -> None:
    running, expected = service
    deadline = time.monotonic() + 120
    while running.status()["pending"] and time.monotonic() < deadline:
        time.sleep(0.2)  # the files an earlier test sent: counts still while this one runs
    before = running.status()
    killed = running.backup(tmp_path / "half", ASTROLABE_FAILPOINT="backup_received_file")
    assert killed.returncode == -signal.SIGKILL
    assert (tmp_path / "half").is_dir() and not (tmp_path / "half" / MANIFEST).exists()
    refused = subprocess.run(
        [sys.executable, "-m", "app", "restore", str(tmp_path / "half")],
        env=os.environ | {"SEARCH_DATA_DIR": str(tmp_path / "restored")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 1 and "not a complete backup" in refused.stderr
    assert not (tmp_path / "restored" / "astrolabe").exists()
    assert answers(running.search) == expected
    after = running.status()
    assert {k: after[k] for k in ("documents", "chunks")} == {
        k: before[k] for k in ("documents", "chunks")
    }
    deadline = time.monotonic() + 30
    while list((running.data / "astrolabe").glob("backup-*")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not list((running.data / "astrolabe").glob("backup-*")), "the service kept its copy"
