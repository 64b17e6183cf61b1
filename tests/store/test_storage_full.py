"""A full disk: the embedded engine writes through memory maps and dies of SIGBUS when the disk
fills, so the service refuses writes while less than SEARCH_MIN_FREE_BYTES are free: the batch
fails whole with a 507 envelope that says so, nothing of it is half-written, and the service
keeps serving searches."""

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.embeddings.dense import HashingEncoder
from tests.helpers import auth, doc, envelope, running_app


def test_a_write_without_room_fails_whole_with_507(tmp_path: Path) -> None:
    with running_app(tmp_path / "data", HashingEncoder(), min_free_bytes=2**60) as client:
        response = client.post(
            "/api/v1/documents", json={"documents": [doc("a"), doc("b")]}, headers=auth()
        )
        message = envelope(response, 507, "storage_full")
        assert "nothing was written" in message
        assert client.get("/api/v1/documents/note/a", headers=auth()).status_code == 404
        assert client.get("/api/v1/status").json()["pending"] == 0
        assert client.post("/api/v1/search", json={}, headers=auth()).status_code == 200


@contextmanager
def small_filesystem(path: Path, megabytes: int) -> Iterator[Path]:
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(path)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def test_filling_a_small_disk_stops_at_the_reserve_and_the_service_lives(tmp_path: Path) -> None:
    content = " ".join(f"Filler sentence number {i} about comets." for i in range(250))
    accepted: list[str] = []
    with (
        small_filesystem(tmp_path / "fs", 96) as fs,
        running_app(fs / "data", HashingEncoder(), min_free_bytes=48 * 2**20) as client,
    ):
        refusal = None
        for batch in range(200):
            ids = [f"b{batch}-{i}" for i in range(64)]
            response = client.post(
                "/api/v1/documents?wait=true",
                json={"documents": [doc(i, content) for i in ids]},
                headers=auth(),
            )
            if response.status_code != 200:
                refusal = response
                break
            accepted += ids
        assert refusal is not None, "the disk never filled: nothing was tested"
        envelope(refusal, 507, "storage_full")
        assert accepted, "the first batch already failed: nothing was tested"
        status = client.get("/api/v1/status").json()
        assert (status["documents"], status["failed"]) == (len(accepted), 0)
        found = client.post("/api/v1/search", json={"query": "comets"}, headers=auth())
        assert found.status_code == 200 and found.json()["results"]
        refused_ids = [f"b{len(accepted) // 64}-{i}" for i in range(64)]
        for doc_id in refused_ids:
            state = client.get(f"/api/v1/documents/note/{doc_id}", headers=auth())
            assert state.status_code == 404 or state.json()["chunks"] == 0, state.text
