"""Bringing a shard's files back into the page cache.

Qdrant Edge drops the files of a shard it closes from the page cache, so after a restart every
first touch of a vector, a graph link or a payload waits for the disk: at 100k chunks the first
93 `granularity=document` searches took 19-23 ms each, against 10-12 ms once read. The kernel is
asked to read the files ahead (`posix_fadvise` WILLNEED), in the order searches need them: the
reads then run in the kernel, many at a time, with nothing copied into this process and the GIL
free. A 1M shard's 4.2 GB came back in 1.9-2.0 s, against 2.5-5.8 s read a block at a time by one
thread, and the first search after a restart took 49-116 ms against 70-144."""

import logging
import os
import threading
from pathlib import Path

log = logging.getLogger(__name__)

RANGE = 64 << 20  # asked for at once; `stop` is looked at between ranges
# Read first what every search touches, then what a page of results reads, then the rest.
FIRST = ("vector_storage-dense", "vector_index-dense", "payload_storage")


def _priority(path: Path) -> int:
    return next((rank for rank, part in enumerate(FIRST) if part in path.parts), len(FIRST))


def _files(shard: Path) -> list[Path]:
    """Every file under `shard`; os.walk passes over a directory that vanishes meanwhile (an
    optimize drops its temporary segments), where Path.rglob raised."""
    return [Path(top, name) for top, _, names in os.walk(shard) for name in names]


def read_back(shard: Path, stop: threading.Event) -> int:
    """Ask the kernel to read every file under `shard` (until `stop`); the bytes asked for.
    Files that vanish meanwhile (an optimize replaces segments) are skipped."""
    total = 0
    for path in sorted(_files(shard), key=_priority):
        if stop.is_set():
            break
        try:
            total += _read_ahead(path, stop)
        except OSError:
            continue
    return total


def _read_ahead(path: Path, stop: threading.Event) -> int:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(descriptor).st_size
        for offset in range(0, size, RANGE):
            if stop.is_set():
                return offset
            os.posix_fadvise(descriptor, offset, RANGE, os.POSIX_FADV_WILLNEED)
        return size
    finally:
        os.close(descriptor)


def start_read_back(shard: Path, stop: threading.Event) -> threading.Thread:
    def run() -> None:
        log.debug("asked for %d bytes of %s back in the page cache", read_back(shard, stop), shard)

    thread = threading.Thread(target=run, name="read-back", daemon=True)
    thread.start()
    return thread
