"""Backup and restore in one process: a stopped index and the service's endpoint give backups
that restore into an empty data directory with the same counts and the same answers to twenty
searches; a backup that is not whole, or a target that is not empty, is refused in one line and
nothing is written."""

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app import cli
from app.backup.errors import BackupError
from app.backup.manifest import MANIFEST, Counts, FileEntry, Manifest, files_under
from app.backup.restore import restore
from app.backup.stream import receive, tar_stream
from app.cli import exits
from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.store.edge import EdgeStore
from tests.backup.common import answers, note
from tests.helpers import auth, index, running_app

DOCUMENTS = 40


def searcher(client: TestClient) -> Any:
    def search(body: dict[str, Any]) -> dict[str, Any]:
        response = client.post("/api/v1/search", json=body, headers=auth())
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    return search


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any, Path]]:
    """A closed index (its data directory), its answers, and a backup the endpoint made."""
    data = tmp_path_factory.mktemp("original") / "data"
    streamed = data.parent / "streamed"
    with running_app(data, HashingEncoder()) as client:
        index(client, *[note(n) for n in range(DOCUMENTS)], note(0, "file"))
        expected = answers(searcher(client))
        response = client.post("/api/v1/admin/backup", headers=auth())
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "application/x-tar"
        receive([response.content], streamed)
        assert not list((data / "astrolabe").glob("backup-*")), "the staging copy stays"
    yield data, expected, streamed


def run(monkeypatch: pytest.MonkeyPatch, data_dir: Path, *argv: str) -> int:
    monkeypatch.setenv("SEARCH_DATA_DIR", str(data_dir))
    with pytest.raises(SystemExit) as done:
        cli.main(list(argv))
    return int(done.value.code or 0)


def restored_answers(data_dir: Path) -> Any:
    with running_app(data_dir, HashingEncoder()) as client:
        return answers(searcher(client))


def test_a_stopped_index_round_trips(
    original: tuple[Path, Any, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data, expected, _ = original
    backup = tmp_path / "backup"
    assert run(monkeypatch, data, "backup", str(backup)) == 0
    manifest = Manifest.read(backup)
    points = DOCUMENTS + 2  # each document a chunk, and BM25's statistics
    assert manifest.counts == Counts(DOCUMENTS + 1, DOCUMENTS + 1, points, 0, 0)
    assert manifest.backend == "embedded" and manifest.index_format == 2
    assert manifest.settings is not None and manifest.settings["chunk_words"] == 180
    assert f"backed up {DOCUMENTS + 1} documents" in capsys.readouterr().out
    assert run(monkeypatch, tmp_path / "restored", "restore", str(backup)) == 0
    assert "counts verified" in capsys.readouterr().out
    assert restored_answers(tmp_path / "restored") == expected


def test_the_endpoint_backup_round_trips(original: tuple[Path, Any, Path], tmp_path: Path) -> None:
    _, expected, streamed = original
    manifest = Manifest.read(streamed)
    manifest.verify(streamed)
    assert manifest.counts.documents == DOCUMENTS + 1
    assert any(name.endswith(".facets.npz") for name in manifest.files)  # a served index has one
    restore(streamed, Settings(data_dir=tmp_path / "restored"))
    assert restored_answers(tmp_path / "restored") == expected


def test_the_endpoint_needs_scope_index(app_client: TestClient) -> None:
    response = app_client.post("/api/v1/admin/backup", headers=auth(scope="search"))
    assert response.status_code == 403
    assert app_client.post("/api/v1/admin/backup").status_code == 401


@pytest.fixture
def copy_of(original: tuple[Path, Any, Path], tmp_path: Path) -> Path:
    backup = tmp_path / "backup"
    shutil.copytree(original[2], backup)
    return backup


def refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], data: Path, src: Path
) -> str:
    assert run(monkeypatch, data, "restore", str(src)) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert not (data / "astrolabe").exists(), "a refused restore wrote an index"
    return err


def test_restore_refuses_a_backup_without_its_manifest(
    copy_of: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (copy_of / MANIFEST).unlink()
    assert "not a complete backup" in refused(monkeypatch, capsys, tmp_path / "data", copy_of)


def test_restore_refuses_a_changed_missing_or_extra_file(
    copy_of: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (copy_of / "stray.txt").write_text("x")
    assert "stray.txt is not in the manifest" in refused(
        monkeypatch, capsys, tmp_path / "d1", copy_of
    )
    (copy_of / "stray.txt").unlink()
    record = copy_of / "index.json"
    record.write_text(record.read_text().replace('"format": 2', '"format": 2 '))
    assert "index.json differs" in refused(monkeypatch, capsys, tmp_path / "d2", copy_of)
    record.unlink()
    assert "index.json is missing" in refused(monkeypatch, capsys, tmp_path / "d3", copy_of)


def test_restore_refuses_a_data_directory_that_is_not_empty(
    copy_of: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "something").write_text("kept")
    err = refused(monkeypatch, capsys, data, copy_of)
    assert "is not empty" in err
    assert sorted(p.name for p in data.iterdir()) == ["something"]


def test_restore_refuses_a_server_backup_in_embedded_mode(copy_of: Path, tmp_path: Path) -> None:
    manifest = json.loads((copy_of / MANIFEST).read_text())
    (copy_of / MANIFEST).write_text(json.dumps(manifest | {"backend": "server"}))
    with pytest.raises(BackupError, match="backup of the server engine"):
        restore(copy_of, Settings(data_dir=tmp_path / "data"))


def test_backup_refuses_a_destination_that_is_not_empty(
    original: tuple[Path, Any, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "old").write_text("kept")
    assert run(monkeypatch, original[0], "backup", str(dest)) == 1
    assert "not an empty directory" in capsys.readouterr().err
    assert sorted(p.name for p in dest.iterdir()) == ["old"]


def test_backup_of_an_index_in_use_names_the_service_options(
    original: tuple[Path, Any, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    holder = EdgeStore(original[0], "astrolabe", facet_index=False)
    try:
        code = run(monkeypatch, original[0], "backup", str(tmp_path / "dest"))
    finally:
        holder.close()
    assert code == exits.EXIT_DATA_DIR_IN_USE
    assert "--url and --token" in capsys.readouterr().err
    assert not (tmp_path / "dest").exists()


def test_a_backup_stream_cut_short_leaves_no_manifest(
    original: tuple[Path, Any, Path], tmp_path: Path
) -> None:
    whole = b"".join(tar_stream(original[2]))
    for cut in (len(whole) // 3, len(whole) - 2048):
        dest = tmp_path / f"cut{cut}"
        with pytest.raises(BackupError, match="incomplete"):
            receive([whole[:cut]], dest)
        assert not (dest / MANIFEST).exists()


def test_a_kill_9_mid_backup_of_a_stopped_index_leaves_it_as_it_was(
    original: tuple[Path, Any, Path], tmp_path: Path
) -> None:
    data, expected, _ = original
    before = {name: FileEntry.of(data / name) for name in files_under(data)}
    killed = subprocess.run(
        [sys.executable, "-m", "app", "backup", str(tmp_path / "half")],
        env=os.environ | {"SEARCH_DATA_DIR": str(data), "ASTROLABE_FAILPOINT": "backup_copied"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert any((tmp_path / "half").iterdir()) and not (tmp_path / "half" / MANIFEST).exists()
    with pytest.raises(BackupError, match="not a complete backup"):
        restore(tmp_path / "half", Settings(data_dir=tmp_path / "restored"))
    after = {name: FileEntry.of(data / name) for name in files_under(data)}
    assert after == before
    assert restored_answers(data) == expected


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")
def test_server_mode_needs_a_qdrant_server_for_snapshots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """qdrant-client's local mode has no snapshot API: both commands say so in one line."""
    monkeypatch.setenv("SEARCH_QDRANT_URL", ":memory:")
    assert run(monkeypatch, tmp_path / "unused", "backup", str(tmp_path / "b")) == 1
    assert "needs a Qdrant server" in capsys.readouterr().err
    assert not (tmp_path / "b" / MANIFEST).exists()
    snapshot = tmp_path / "snap"
    snapshot.mkdir()
    (snapshot / "collection.snapshot").write_bytes(b"not a snapshot")
    manifest = Manifest.describe(snapshot, "server", "astrolabe", Counts(0, 0, 0, 0, 0))
    manifest.write(snapshot)
    assert run(monkeypatch, tmp_path / "unused", "restore", str(snapshot)) == 1
    assert "needs a Qdrant server" in capsys.readouterr().err
