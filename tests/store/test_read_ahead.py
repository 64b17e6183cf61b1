"""Reading a shard's files ahead of its open (app/store/read_ahead.py): what the open reads and
nothing else, in a process of its own, into the page cache; `serve` starts it beside the engine
and stops it once the shard is open, and it never writes where there is no index."""

import os
from pathlib import Path

import pytest

from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.store import read_ahead
from app.store.layout import IndexLayout
from app.store.open import Use, _served_shard, build_graph, open_store, start_early
from app.store.read_back import resident
from tests.helpers import doc


@pytest.fixture(scope="module")
def shard(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A shard as `ingest` leaves it: chunks written, its graph built."""
    data = tmp_path_factory.mktemp("data")
    store = open_store(Settings(data_dir=data), Use.COMMAND)
    try:
        indexer = Indexer(store, HashingEncoder(), Bm25Encoder())
        indexer.index(indexer.accept(validate_batch([doc(str(n)) for n in range(40)])))
        build_graph(store)
    finally:
        store.close()
    return IndexLayout.of(data, Settings(data_dir=data).collection).current()


def _files(shard: Path) -> list[Path]:
    return [path for path in shard.rglob("*") if path.is_file()]


def _resident(path: Path) -> float:
    """The share of the file's pages in the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        pages = resident(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    return float(pages.mean()) if pages.size else 1.0


def _evict(paths: list[Path]) -> None:
    for path in paths:
        with path.open("rb+") as file:
            os.fsync(file.fileno())  # clean pages: the kernel may drop them
            os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    if any(_resident(path) > 0 for path in paths if path.stat().st_size):
        pytest.skip("this file system keeps the files in memory whatever is asked (tmpfs)")


def test_what_the_open_reads_the_largest_first(shard: Path) -> None:
    listed = read_ahead.files_the_open_reads(shard, IndexLayout.facet_snapshot(shard))
    names = {part for path in listed for part in path.relative_to(shard).parts}
    assert {"vector_storage-dense", "payload_index", "wal"} <= names
    assert {"payload_storage", "vector_storage-sparse"}.isdisjoint(names)
    not_read = [path for path in _files(shard) if path not in listed]
    assert not_read and all(
        {"payload_storage", "vector_storage-sparse"} & set(path.parts) for path in not_read
    )
    sizes = [path.stat().st_size for path in listed]
    assert sizes == sorted(sizes, reverse=True)


def test_the_facet_snapshot_is_read_last(shard: Path, tmp_path: Path) -> None:
    snapshot = IndexLayout.facet_snapshot(shard)
    if not snapshot.exists():
        snapshot.write_bytes(b"facets")
    assert read_ahead.files_the_open_reads(shard, IndexLayout.facet_snapshot(shard))[-1] == snapshot


def test_its_process_reads_them_from_the_disk_and_nothing_else(shard: Path) -> None:
    """What it read from the disk is the kernel's count (`ru_inblock`), not what the page cache
    holds afterwards: a machine that pages out what nobody touches (DAMON) may already have
    dropped some of it."""
    files = _files(shard)
    _evict(files)
    reader = read_ahead.start(shard, IndexLayout.facet_snapshot(shard))
    assert reader is not None
    _, status, usage = os.wait4(reader.pid, 0)
    reader.returncode = os.waitstatus_to_exitcode(status)
    assert reader.returncode == 0
    listed = set(read_ahead.files_the_open_reads(shard, IndexLayout.facet_snapshot(shard)))
    on_disk = sum(path.stat().st_blocks * 512 for path in listed)  # holes are not read
    # (a page short here and there: a tiny file's data may come with its inode)
    assert usage.ru_inblock * 512 >= 0.95 * on_disk > 0
    payloads = [path for path in files if "payload_storage" in path.parts and path.stat().st_size]
    assert payloads and all(_resident(path) == 0 for path in payloads)


def test_it_reads_no_more_than_its_budget(tmp_path: Path) -> None:
    """Half the memory available: on a machine too small for the files, reads would push each
    other out of the page cache before the engine reads them."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.write_bytes(b"x" * (3 << 20))
    second.write_bytes(b"y" * (1 << 20))
    for path in (first, second):
        with path.open("rb+") as file:
            os.fsync(file.fileno())
    _evict([first, second])
    assert read_ahead.read([first, second], budget=2 << 20) == 2 << 20
    assert _resident(second) == 0
    assert read_ahead.read([first, second], budget=8 << 20) == 4 << 20


def test_the_budget_is_half_the_memory_available(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  8000 kB\nMemFree:  1000 kB\nMemAvailable:  6000 kB\n")
    assert read_ahead.budget(meminfo) == 3000 * 1024
    meminfo.write_text("MemTotal:  8000 kB\n")  # a kernel that does not say: nothing read
    assert read_ahead.budget(meminfo) == 0
    assert read_ahead.budget(tmp_path / "absent") == 0
    assert read_ahead.budget() > 0  # this machine's


def test_serve_starts_it_beside_the_engine_and_stops_it_once_the_shard_is_open(
    shard: Path,
) -> None:
    settings = Settings(data_dir=shard.parent.parent)
    early = start_early(settings)
    assert early is not None and early.reader is not None
    store = open_store(settings, Use.SERVE, early)
    try:
        assert early.reader.returncode is not None  # stopped and reaped
        assert store.count() >= 40  # the index read ahead is the one served
    finally:
        store.close()


def test_a_start_refused_after_the_launch_stops_it_too(shard: Path) -> None:
    early = start_early(Settings(data_dir=shard.parent.parent))
    assert early is not None and early.reader is not None
    early.discard()
    assert early.reader.returncode is not None
    assert early.process.returncode is not None


def test_nothing_is_read_or_written_where_there_is_no_index(tmp_path: Path) -> None:
    """IndexLayout.current() makes a new layout where there is none: the read-ahead must not
    (a refused start changes nothing)."""
    assert _served_shard(Settings(data_dir=tmp_path)) is None
    assert not any(tmp_path.iterdir())
    assert read_ahead.start(tmp_path / "absent", tmp_path / "absent.facets.npz") is None


def test_an_unreadable_record_leaves_the_reading_to_the_open(tmp_path: Path) -> None:
    """The engine refuses it in one line; the read-ahead neither raises nor reads."""
    root = tmp_path / Settings(data_dir=tmp_path).collection
    root.mkdir()
    (root / "index.json").write_text("{not json")
    assert _served_shard(Settings(data_dir=tmp_path)) is None
    (root / "index.json").write_text('{"shard": "../../elsewhere"}')
    assert _served_shard(Settings(data_dir=tmp_path)) is None
    assert sorted(path.name for path in root.iterdir()) == ["index.json"]
