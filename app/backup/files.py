"""Writing a backup's files as they arrive, keeping them sparse: the shard's files are mostly
holes (`app.store.copies`), which a plain write would fill with zeros."""

import os
from typing import BinaryIO

BLOCK = 1 << 20
_PIECE = 1 << 16  # the size of a hole `write_block` leaves: a filesystem block or more
_ZEROS = bytes(_PIECE)


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
