"""Reading a rebuilt shard's files into the page cache.

An optimize leaves most of the segments it wrote out of the page cache (at 30k points, 10 of
206 MiB of payload indexes and 4 of 99 MiB of payloads): until the files are read, every first
touch of a vector, a graph link or a payload waits for the disk. A rebuild's copy therefore
reads them in the background after its optimize (a read in a thread releases the GIL between
blocks), only the blocks not in the page cache (asked with `mincore`, which reads nothing).

A start does not read back (it reads ahead of the open instead: `read_ahead`): opening a shard
reads what searches read (the vectors, the graph, the payload indexes; 2.5 GB at 1M after a
reboot) and leaves a search only the payloads of its page of results to fetch. At 1M, five
alternated starts each (`docs/benchmarks.md`, "Seventh pass"), the first 6 s after `/readyz`
without a read-back against with this one (and a pause after each block): p99 30.9 against 33.3
ms and `/readyz` 4.9 against 5.6 s after a reboot, p99 28.4 against 28.1 with the cache kept.

Only the files a search reads through the page cache are read: the engine holds the quantized
vectors, the sparse index and the pinned payload indexes in its own memory (it reads them once
and drops their pages), and a search never reads the sparse vectors (an optimize does); at 1M
that is 1.1 GB of 5 GB. Each block is read alone (no read-ahead past it), so the served
engine's reads wait behind one block at most."""

import ctypes
import json
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
NEVER_SEARCHED = ("vector_storage-sparse", "vector_index-sparse")
QUANTIZED_PREFIX = "quantized"
# The engine names a payload index's directory `<id>-<the field's first letters>-<kind>`.
FIELD_LETTERS = 8

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
    """Every file under `shard` a search reads through the page cache; os.walk passes over a
    directory that vanishes meanwhile (an optimize drops its temporary segments), where
    Path.rglob raised."""
    found = []
    for top, directories, names in os.walk(shard):
        directories[:] = [d for d in directories if d not in NEVER_SEARCHED]
        if Path(top).name == "payload_index":
            held = _held_in_memory(Path(top))
            directories[:] = [d for d in directories if _field_of(d) not in held]
        found += [Path(top, name) for name in names if not name.startswith(QUANTIZED_PREFIX)]
    return found


def _held_in_memory(payload_index: Path) -> set[str]:
    """The fields (as their directories name them) whose index the engine holds in memory (all
    but those memory-mapped on disk), from the segment's own record of where each index lives."""
    try:
        record = json.loads((payload_index / "config.json").read_text(encoding="utf-8"))
        return {
            field[:FIELD_LETTERS]
            for field, indexes in record["indexed_types"].items()
            if not any(_mapped_on_disk(index) for index in indexes)
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()


def _field_of(directory: str) -> str:
    """`readers` of `s8in6ie175spvbtb9sv9do38-readers-map`; '' for any other name."""
    return directory.partition("-")[2].rpartition("-")[0]


def _mapped_on_disk(index: dict[str, object]) -> bool:
    storage = index.get("storage_type")
    return isinstance(storage, dict) and storage.get("mmap", {}).get("is_on_disk") is True


def _read_missing(path: Path, buffer: bytearray, stop: threading.Event) -> int:
    with path.open("rb", buffering=0) as file:
        size = os.fstat(file.fileno()).st_size
        os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_RANDOM)  # this block, no more
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
