"""Reading what a shard's open reads into the page cache, ahead of the open.

Opening a shard reads its vectors, its graph, its payload indexes and its write-ahead log
through page faults and small reads: on the users' 100k index after a reboot (344 MiB) the open
takes ~1.1 s where the same files read in order take ~0.25 s. `serve` therefore starts a
process of its own that reads them in order (`sendfile` into /dev/null: one call a file, no
copy) as it launches the engine, whose imports leave the disk idle for ~0.5 s; the engine then
finds them in the page cache. A process and not a thread: a thread would wait for the
interpreter's lock at every file while `serve` imports its web stack. With the page cache
emptied before each start (`docs/benchmarks.md`, "Thirteenth pass"): `/readyz` 0.84-0.92 s
against 1.62-1.79 on that index, 2.9-5.0 s against 6.7-7.3 at 1M.

Not read: the payloads and the sparse vectors, which an open does not touch (a search reads its
page of results' payloads; an optimize reads the sparse vectors); nor more than half the memory
the kernel says is available, so that on a machine too small to hold the files the reads do not
push each other out before the engine reads them.

Free of imports outside the standard library: it runs as
`python -I -S read_ahead.py SHARD FACET_SNAPSHOT`."""

import os
import subprocess
import sys
from pathlib import Path

NOT_OPENED = ("payload_storage", "vector_storage-sparse")


def files_the_open_reads(shard: Path, snapshot: Path) -> list[Path]:
    """The shard's files an open reads, the largest first (they hold most of the bytes, and
    the engine's reads of small files cost it little), then its facet snapshot if there is one."""
    found = []
    for top, directories, names in os.walk(shard):
        directories[:] = [d for d in directories if d not in NOT_OPENED]
        found += [Path(top, name) for name in names]
    return sorted(found, key=_size, reverse=True) + ([snapshot] if snapshot.exists() else [])


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # gone meanwhile
        return 0


def read(paths: list[Path], budget: int) -> int:
    """Read each file into the page cache, up to `budget` bytes; the bytes read. A file that
    cannot be read is passed over: the open reads it, or refuses the shard, itself."""
    total = 0
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for path in paths:
            if total >= budget:
                break
            try:
                total += _send_to(null, path, budget - total)
            except OSError:
                continue
    finally:
        os.close(null)
    return total


def _send_to(null: int, path: Path, most: int) -> int:
    file = os.open(path, os.O_RDONLY)
    try:
        size = min(os.fstat(file).st_size, most)
        sent = 0
        while sent < size:
            count = os.sendfile(null, file, sent, size - sent)
            if count == 0:
                break
            sent += count
        return sent
    finally:
        os.close(file)


def budget(meminfo: Path = Path("/proc/meminfo")) -> int:
    """Half the memory available (MemAvailable); 0 where the kernel does not say."""
    try:
        for line in meminfo.read_text().splitlines():
            name, _, value = line.partition(":")
            if name == "MemAvailable":
                return int(value.split()[0]) * 1024 // 2
    except (OSError, ValueError, IndexError):
        pass
    return 0


def start(shard: Path, snapshot: Path) -> "subprocess.Popen[bytes] | None":
    """The reader process for `shard` and its facet `snapshot`; None when there is no shard
    to read, or no process could be started (the open then reads the files itself, only
    slower)."""
    if not shard.is_dir():
        return None
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", __file__, str(shard), str(snapshot)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


if __name__ == "__main__":
    read(files_the_open_reads(Path(sys.argv[1]), Path(sys.argv[2])), budget())
