"""Copies that keep files sparse. Qdrant Edge preallocates its write-ahead log segments and
memory-mapped pages as sparse files (a small index takes ~1 MiB on disk and ~250 MiB in apparent
size): a plain copy would write every hole out as zeros."""

import errno
import os
import shutil
from pathlib import Path
from typing import BinaryIO

BLOCK = 1 << 20
_PIECE = 1 << 16  # the size of a hole `write_block` leaves: a filesystem block or more
_ZEROS = bytes(_PIECE)


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


def copy_tree_sparse(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, copy_function=copy_sparse)


def write_block(target: BinaryIO, block: bytes) -> None:
    """Write `block`, leaving its pieces of zeros as holes (`target` is truncated to its size by
    the caller at the end, so a hole at the end is kept too)."""
    view = memoryview(block)
    for start in range(0, len(view), _PIECE):
        piece = view[start : start + _PIECE]
        if piece == _ZEROS[: len(piece)]:
            target.seek(len(piece), os.SEEK_CUR)
        else:
            target.write(piece)
