"""Reading a shard's files back into the page cache.

Qdrant Edge drops the files of a shard it closes from the page cache (the engine process ends
without closing the shard it serves for that reason), an optimize leaves the segments it wrote
out of it, and a reboot empties it: until the files are read, every first touch of a vector, a
graph link or a payload waits for the disk (at 100k chunks the first 93 `granularity=document`
searches took 19-23 ms each, against 10-12 ms once read). A read in a
thread releases the GIL between blocks: the 730 MB of a 100k shard come back in 0.6-0.9 s
without holding searches up. Only the blocks not in the page cache are read: after a stop that
kept them, copying the 3.9 GB of a 1M shard took a core for the first seconds after `/readyz`
(the first search 65-79 against 43-52 ms, three starts each)."""

import ctypes
import logging
import mmap
import os
import threading
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

BLOCK = 1 << 20
PAGES_PER_BLOCK = BLOCK // mmap.PAGESIZE
# Read first what every search touches, then what a page of results reads, then the rest.
FIRST = ("vector_storage-dense", "vector_index-dense", "payload_storage")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]  # fmt: skip
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
_MAP_FAILED = ctypes.c_void_p(-1).value


def resident(fd: int, size: int) -> np.ndarray:
    """Per page of the open file `fd` (`size` bytes): whether it is in the page cache
    (mincore(2) on a mapping of it, which reads nothing)."""
    pages = -(-size // mmap.PAGESIZE)
    if not pages:
        return np.zeros(0, dtype=np.bool_)
    address = _libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if address in (None, _MAP_FAILED):
        raise OSError(ctypes.get_errno(), "mmap failed")
    try:
        flags = ctypes.create_string_buffer(pages)
        if _libc.mincore(address, size, flags) != 0:
            raise OSError(ctypes.get_errno(), "mincore failed")
    finally:
        _libc.munmap(address, size)
    return (np.frombuffer(flags.raw, dtype=np.uint8) & 1).astype(np.bool_)


def _missing_blocks(fd: int, size: int) -> list[int]:
    """The BLOCK-sized blocks of the file that hold a page not in the page cache."""
    pages = resident(fd, size)
    padded = np.ones(-(-pages.size // PAGES_PER_BLOCK) * PAGES_PER_BLOCK, dtype=np.bool_)
    padded[: pages.size] = pages
    whole = padded.reshape(-1, PAGES_PER_BLOCK).all(axis=1)
    return [int(block) for block in np.flatnonzero(~whole)]


def _priority(path: Path) -> int:
    return next((rank for rank, part in enumerate(FIRST) if part in path.parts), len(FIRST))


def _files(shard: Path) -> list[Path]:
    """Every file under `shard`; os.walk passes over a directory that vanishes meanwhile (an
    optimize drops its temporary segments), where Path.rglob raised."""
    return [Path(top, name) for top, _, names in os.walk(shard) for name in names]


def _read_missing(path: Path, buffer: bytearray, stop: threading.Event) -> int:
    with path.open("rb", buffering=0) as file:
        size = os.fstat(file.fileno()).st_size
        total = 0
        for block in _missing_blocks(file.fileno(), size):
            if stop.is_set():
                break
            file.seek(block * BLOCK)
            total += file.readinto(buffer) or 0
        return total


def read_back(shard: Path, stop: threading.Event) -> int:
    """Read every block under `shard` that is not in the page cache once (until `stop`); the
    number of bytes read. Files that vanish meanwhile (an optimize replaces segments) are
    skipped."""
    files = sorted(_files(shard), key=_priority)
    buffer = bytearray(BLOCK)
    total = 0
    for path in files:
        if stop.is_set():
            break
        try:
            total += _read_missing(path, buffer, stop)
        except OSError:
            continue
    return total


def start_read_back(shard: Path, stop: threading.Event) -> threading.Thread:
    def run() -> None:
        log.debug("read %d bytes of %s back into the page cache", read_back(shard, stop), shard)

    thread = threading.Thread(target=run, name="read-back", daemon=True)
    thread.start()
    return thread
