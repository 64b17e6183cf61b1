"""Reading a shard's files back into the page cache.

Qdrant Edge drops the files of a shard it closes from the page cache (the engine process ends
without closing the shard it serves for that reason), an optimize leaves the segments it wrote
out of it, and a reboot empties it: until the files are read, every first touch of a vector, a
graph link or a payload waits for the disk (at 100k chunks the first 93 `granularity=document`
searches took 19-23 ms each, against 10-12 ms once read). A read in a
thread releases the GIL between blocks: the 730 MB of a 100k shard come back in 0.6-0.9 s
without holding searches up."""

import logging
import os
import threading
from pathlib import Path

log = logging.getLogger(__name__)

BLOCK = 1 << 20
# Read first what every search touches, then what a page of results reads, then the rest.
FIRST = ("vector_storage-dense", "vector_index-dense", "payload_storage")


def _priority(path: Path) -> int:
    return next((rank for rank, part in enumerate(FIRST) if part in path.parts), len(FIRST))


def _files(shard: Path) -> list[Path]:
    """Every file under `shard`; os.walk passes over a directory that vanishes meanwhile (an
    optimize drops its temporary segments), where Path.rglob raised."""
    return [Path(top, name) for top, _, names in os.walk(shard) for name in names]


def read_back(shard: Path, stop: threading.Event) -> int:
    """Read every file under `shard` once (until `stop`); the number of bytes read. Files that
    vanish meanwhile (an optimize replaces segments) are skipped."""
    files = sorted(_files(shard), key=_priority)
    buffer = bytearray(BLOCK)
    total = 0
    for path in files:
        try:
            with path.open("rb", buffering=0) as file:
                while not stop.is_set() and (read := file.readinto(buffer)):
                    total += read
        except OSError:
            continue
        if stop.is_set():
            break
    return total


def start_read_back(shard: Path, stop: threading.Event) -> threading.Thread:
    def run() -> None:
        log.debug("read %d bytes of %s back into the page cache", read_back(shard, stop), shard)

    thread = threading.Thread(target=run, name="read-back", daemon=True)
    thread.start()
    return thread
