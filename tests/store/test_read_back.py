"""Reading a shard back into the page cache: every byte once, what searches touch first, and
the pages are then in the cache."""

import ctypes
import mmap
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


def _resident(path: Path) -> float:
    """The share of the file's pages in the page cache (mincore)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
    libc.mmap.argtypes += [ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    size = path.stat().st_size
    pages = -(-size // mmap.PAGESIZE)
    with path.open("rb") as file:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, file.fileno(), 0)
    try:
        vector = ctypes.create_string_buffer(pages)
        assert libc.mincore(address, size, vector) == 0, os.strerror(ctypes.get_errno())
        return sum(byte & 1 for byte in vector.raw) / pages
    finally:
        libc.munmap(address, size)


def test_the_pages_are_in_the_cache_afterwards(tmp_path: Path) -> None:
    path = tmp_path / "segments/a/vector_storage-dense/matrix.dat"
    path.parent.mkdir(parents=True)
    with path.open("wb") as file:
        file.write(os.urandom(8 << 20))
        file.flush()
        os.fsync(file.fileno())  # clean pages: the kernel may drop them
        os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    if _resident(path) > 0.5:
        pytest.skip("this file system keeps the file in memory whatever is asked (tmpfs)")
    read_back(tmp_path, threading.Event())
    assert _resident(path) == 1


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
