"""Reading a shard back into the page cache: every byte once, what searches touch first."""

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.store import read_back as module
from app.store.read_back import read_back


def _write(root: Path, name: str, size: int) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    return path


def test_every_file_is_read_once_vectors_and_payloads_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rest = _write(tmp_path, "segments/a/payload_index/map.bin", 3 * module.BLOCK + 5)
    payloads = _write(tmp_path, "segments/a/payload_storage/page_0.dat", 10)
    vectors = _write(tmp_path, "segments/b/vector_storage-dense/matrix.dat", module.BLOCK)
    opened: list[Path] = []
    real_open = Path.open

    def spying(self: Path, *args: object, **kwargs: object) -> object:
        opened.append(self)
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", spying)
    assert read_back(tmp_path, threading.Event()) == 3 * module.BLOCK + 5 + 10 + module.BLOCK
    assert opened == [vectors, payloads, rest]


def test_it_stops_when_asked(tmp_path: Path) -> None:
    _write(tmp_path, "segments/a/payload_storage/page_0.dat", 4 * module.BLOCK)
    stop = threading.Event()
    stop.set()
    assert read_back(tmp_path, stop) == 0


def test_a_directory_gone_while_listed_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An optimize drops its temporary segments while the files are listed."""
    _write(tmp_path, "segments/a/payload_storage/page_0.dat", 7)
    _write(tmp_path, "segments/tmp/payload_storage/page_0.dat", 3)
    real_scandir = os.scandir

    def dropping(path: str) -> Iterator[os.DirEntry[str]]:
        entries = list(real_scandir(path))
        if Path(path) == tmp_path / "segments":
            shutil.rmtree(tmp_path / "segments/tmp")  # listed, gone before it is entered
        return iter(entries)

    class Listing:
        """What os.scandir returns: an iterator and a context manager."""

        def __init__(self, path: str) -> None:
            self.entries = dropping(path)

        def __next__(self) -> os.DirEntry[str]:
            return next(self.entries)

        def __enter__(self) -> "Listing":
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    def scandir(path: Any) -> Any:  # rmtree lists by file descriptor: left as it is
        return Listing(path) if isinstance(path, str) else real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert read_back(tmp_path, threading.Event()) == 7


def test_a_file_gone_before_it_is_read_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _write(tmp_path, "segments/a/payload_storage/page_0.dat", 7)
    gone = tmp_path / "segments/b/vector_storage-dense/matrix.dat"
    monkeypatch.setattr(module, "_files", lambda shard: [gone, kept])
    assert read_back(tmp_path, threading.Event()) == 7
