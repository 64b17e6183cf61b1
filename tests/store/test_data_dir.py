"""Faults at start-up end in one line and a documented exit code (docs/deployment.md), never a
traceback, and change nothing on disk: a data directory held by another process, a corrupted or
foreign one, a Qdrant server that is not there."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.exits import (
    EXIT_DATA_DIR_IN_USE,
    EXIT_DATA_DIR_UNUSABLE,
    EXIT_ENGINE_UNAVAILABLE,
    EXIT_INDEX_OUTDATED,
)
from app.store.edge import EdgeStore
from app.store.errors import DataDirectoryInUse, DataDirectoryUnusable
from app.store.layout import EDGE_CONFIG as CONFIG_FILE
from app.store.layout import IndexLayout
from bench.harness.loopback import free_port


def serve(tmp_path: Path, data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"k": {"sub": "a", "scope": "search"}}))
    environ = os.environ | {"SEARCH_DATA_DIR": str(data_dir), "SEARCH_API_KEYS_FILE": str(keys)}
    return subprocess.run(
        [sys.executable, "-m", "app", "serve", "--port", "0"],
        env=environ | env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` with a hash of its bytes."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_a_second_process_on_the_same_directory_exits_with_one_line(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    store = EdgeStore(data_dir, "astrolabe")
    try:
        with pytest.raises(DataDirectoryInUse):
            EdgeStore(data_dir, "astrolabe")
        result = serve(tmp_path, data_dir)
    finally:
        store.close()
    assert result.returncode == EXIT_DATA_DIR_IN_USE
    assert "in use by another process" in one_line(result.stderr)


@pytest.mark.parametrize("layout", ["generations", "format 1"])
def test_a_corrupted_directory_is_refused_and_left_as_it_was(tmp_path: Path, layout: str) -> None:
    data_dir = tmp_path / "data"
    EdgeStore(data_dir, "astrolabe").close()
    shard = IndexLayout.of(data_dir, "astrolabe").current()
    if layout == "format 1":  # the previous release's layout: the shard at the collection path
        shutil.rmtree(data_dir / "astrolabe")
        EdgeStore(tmp_path / "other", "astrolabe").close()
        IndexLayout.of(tmp_path / "other", "astrolabe").current().rename(data_dir / "astrolabe")
        shard = data_dir / "astrolabe"
    (shard / CONFIG_FILE).write_text("{ not json")
    before = snapshot(data_dir)
    with pytest.raises(DataDirectoryUnusable):
        EdgeStore(data_dir, "astrolabe")
    result = serve(tmp_path, data_dir)
    # A format-1 index is 0.1.0's, refused for that release's BM25 before anything opens it.
    expected = EXIT_INDEX_OUTDATED if layout == "format 1" else EXIT_DATA_DIR_UNUSABLE
    assert result.returncode == expected
    assert "nothing was changed" in one_line(result.stderr)
    assert snapshot(data_dir) == before


@pytest.mark.parametrize("kind", ["foreign files", "a file"])
def test_a_foreign_directory_is_refused_and_left_as_it_was(tmp_path: Path, kind: str) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    if kind == "a file":
        (data_dir / "astrolabe").write_text("not a directory")
    else:
        (data_dir / "astrolabe").mkdir()
        (data_dir / "astrolabe" / "thesis.tex").write_text("my only copy")
    before = snapshot(data_dir)
    result = serve(tmp_path, data_dir)
    assert result.returncode == EXIT_DATA_DIR_UNUSABLE
    one_line(result.stderr)
    assert snapshot(data_dir) == before


def test_an_unreachable_qdrant_server_exits_with_one_line(tmp_path: Path) -> None:
    port = free_port()  # nobody listens on it
    result = serve(tmp_path, tmp_path / "data", SEARCH_QDRANT_URL=f"http://127.0.0.1:{port}")
    assert result.returncode == EXIT_ENGINE_UNAVAILABLE
    # the retries are logged as they happen; then one line says why the start failed
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"astrolabe-search: cannot reach Qdrant at http://127.0.0.1:{port}")
