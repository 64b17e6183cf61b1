"""Copies of the embedded shard: the one way a shard is copied (a rebuild's copy and a backup's
alike), sparse, at one moment of its writes, and only when it fits beside the disk reserve.

Qdrant Edge preallocates its write-ahead log segments and memory-mapped pages as sparse files (a
small index takes ~1 MiB on disk and ~250 MiB in apparent size): a plain copy would write every
hole out as zeros.

Inside the data directory a copy shares the files the engine never writes again (`sealed`) by
hard links and copies the rest: writes wait for the copy, and a link takes no time and reads
nothing (at 100k chunks 401 of 686 MB are linked; writes were held 4.0 instead of 11.4 s on a
loaded machine, `bench.index.copy_stall`). A copy elsewhere (a backup's destination) is a copy
of every file."""

import errno
import os
import shutil
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

from app.store.errors import StorageFull
from app.store.layout import IndexLayout
from app.store.sealed import shareable_files

BLOCK = 1 << 20


class OpenShard(Protocol):
    """What a copy needs of the store that has the shard open (`EdgeStore`)."""

    @property
    def path(self) -> Path: ...

    @property
    def min_free_bytes(self) -> int: ...

    def writes_paused(self) -> AbstractContextManager[None]: ...

    def flush(self) -> None: ...

    def save_facets(self, path: Path) -> bool: ...


def disk_usage(path: Path) -> int:
    """Bytes `path` takes on disk (allocated blocks: sparse files count what they hold)."""
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def copy_sparse(src: str | Path, dst: str | Path) -> None:
    """Copy the data extents of `src` only; the holes stay holes (same size, same bytes)."""
    with open(src, "rb") as source, open(dst, "wb") as target:
        size = os.fstat(source.fileno()).st_size
        offset = 0
        while offset < size:
            try:
                start = os.lseek(source.fileno(), offset, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno != errno.ENXIO:  # ENXIO: no data past `offset`
                    raise
                break
            end = os.lseek(source.fileno(), start, os.SEEK_HOLE)
            source.seek(start)
            target.seek(start)
            left = end - start
            while left > 0:
                block = source.read(min(BLOCK, left))
                if not block:
                    break
                target.write(block)
                left -= len(block)
            offset = end
        target.truncate(size)


def copy_shard(source: Path, target: Path, share: bool) -> None:
    """`source` to `target` (new); with `share`, the files the engine never writes again are
    hard links (copied where the file system refuses one)."""
    shared = shareable_files(source) if share else set()

    def copy_file(src: str, dst: str) -> None:
        if Path(src) in shared and _linked(src, dst):
            return
        copy_sparse(src, dst)

    shutil.copytree(source, target, copy_function=copy_file)


def _linked(src: str, dst: str) -> bool:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or one without links
        return False
    return True


def check_room_for_copy(store: OpenShard, where: Path, what: str, otherwise: str) -> None:
    """StorageFull (saying `what` needs how much and `otherwise`) unless a copy of the shard
    fits at `where` with the store's disk reserve left free."""
    needed = disk_usage(store.path) + store.min_free_bytes
    free = shutil.disk_usage(where).free
    if free < needed:
        raise StorageFull(
            f"{what} needs {needed // 2**20} MiB free at {where}, {free // 2**20} MiB are:"
            f" {otherwise}"
        )


@contextmanager
def shard_copied(store: OpenShard, target: Path) -> Iterator[None]:
    """Copy the shard to `target` with its facet snapshot, at one moment of its writes: writes
    wait (they are not refused) until the body of the `with` has run; searches go on. A target
    inside the data directory shares the files the engine never writes again."""
    share = target.is_relative_to(store.path.parent)
    with store.writes_paused():
        store.flush()
        shutil.rmtree(target, ignore_errors=True)  # what a process killed mid-copy left
        copy_shard(store.path, target, share)
        store.save_facets(IndexLayout.facet_snapshot(target))
        yield
