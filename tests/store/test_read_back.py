"""Reading a rebuilt shard into the page cache: every block not in it once, what searches touch
first, only the files a search reads through the page cache, and the pages are then in the
cache."""

import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.store import read_back as module
from app.store.read_back import read_back


def _evict(path: Path) -> None:
    """The file's pages out of the page cache (clean ones: written to the disk first)."""
    with path.open("rb+") as file:
        os.fsync(file.fileno())
        os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    if _resident(path) > 0:
        pytest.skip("this file system keeps the file in memory whatever is asked (tmpfs)")


def _write(root: Path, name: str, size: int) -> Path:
    """A file of `size` bytes, none of them in the page cache."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    _evict(path)
    return path


def _resident(path: Path) -> float:
    """The share of the file's pages in the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        pages = module.resident(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    return float(pages.mean()) if pages.size else 1.0


def test_every_file_is_read_once_vectors_and_payloads_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rest = _write(tmp_path, "segments/a/payload_index/map.bin", 3 * module.BLOCK + 5)
    payloads = _write(tmp_path, "segments/a/payload_storage/page_0.dat", 10)
    vectors = _write(tmp_path, "segments/b/vector_storage-dense/matrix.dat", module.BLOCK)
    read: list[Path] = []
    real_read = module._read_missing

    def spying(path: Path, buffer: bytearray, stop: threading.Event) -> int:
        read.append(path)
        return real_read(path, buffer, stop)

    monkeypatch.setattr(module, "_read_missing", spying)
    assert read_back(tmp_path, threading.Event()) == 3 * module.BLOCK + 5 + 10 + module.BLOCK
    assert read == [vectors, payloads, rest]


def test_what_the_engine_holds_in_memory_or_never_searches_is_not_read(tmp_path: Path) -> None:
    """The quantized vectors, the sparse index and vectors, and the payload indexes the segment
    records as held in memory (pinned, or a mutable segment's): 1.1 GB read for nothing at 1M."""
    segment = tmp_path / "segments/a"
    mapped = {"storage_type": {"mmap": {"is_on_disk": True}}}
    pinned = {"storage_type": {"mmap": {"is_on_disk": False}}}
    record = {
        "indexed_types": {
            "tags": [mapped, pinned],
            "readers": [pinned],
            "kind": [{"storage_type": "gridstore"}],
        }
    }
    (segment / "payload_index").mkdir(parents=True)
    (segment / "payload_index/config.json").write_text(json.dumps(record))
    searched = [
        _write(segment, "payload_index/iu62v2a16l6fakk33esbbdi8-tags-map/point_to_values.bin", 3),
        _write(segment, "vector_storage-dense/matrix.dat", 5),
    ]
    for held in (
        "payload_index/s8in6ie175spvbtb9sv9do38-readers-map/point_to_values.bin",
        "payload_index/1cjs2m7umdlb32ggvtk7i2fc-kind-map/values_to_points.bin",
        "vector_storage-dense/quantized.data",
        "vector_index-sparse/inverted_index.dat",
        "vector_storage-sparse/store/page_0.dat",
    ):
        _write(segment, held, 1000)
    assert sorted(module._files(tmp_path)) == sorted(
        [*searched, segment / "payload_index/config.json"]
    )
    assert read_back(tmp_path, threading.Event()) == 3 + 5


def test_the_pages_are_in_the_cache_afterwards(tmp_path: Path) -> None:
    path = _write(tmp_path, "segments/a/vector_storage-dense/matrix.dat", 8 * module.BLOCK + 5)
    assert _resident(path) == 0
    read_back(tmp_path, threading.Event())
    assert _resident(path) == 1


def test_only_the_blocks_not_in_the_cache_are_read(tmp_path: Path) -> None:
    """After a stop that kept the page cache, nothing is read again (a 1M shard is 3.9 GB)."""
    path = _write(tmp_path, "segments/a/vector_storage-dense/matrix.dat", 4 * module.BLOCK + 5)
    with path.open("rb") as file:
        os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_RANDOM)  # no read-ahead
        file.seek(module.BLOCK)
        file.read(2 * module.BLOCK)  # blocks 1 and 2 in the cache
    assert read_back(tmp_path, threading.Event()) == module.BLOCK + module.BLOCK + 5
    assert read_back(tmp_path, threading.Event()) == 0


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
