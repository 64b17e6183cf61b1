"""How a shard server's process (`python -m app.engine_child`) is started: its command line, its
environment and its socket. Free of heavy imports on purpose: `serve` starts the serving one
first thing, so that its imports and the opening of its shard run beside the HTTP process's imports
(each about a second) instead of after them."""

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.config import Settings

KEY_ENV = "ASTROLABE_ENGINE_KEY"  # hex; the child reads and forgets it
CHILD_MODULE = "app.engine_child"  # the child's program (the top level: it sets up logging)
# While writes arrive, a rebuild merges segments only past REBUILD_SEGMENTS, so its cost follows
# what was written since the last one instead of the size of the index; once they pause, a merge
# brings the index down to MERGED_SEGMENTS, as an offline optimize leaves it. 4, not 8: on the
# 8 segments a 100k load left, a search cost the engine 13 ms of CPU and 16 clients got 93-97
# searches/s; on 4, 6.6-7.1 ms and 143-156/s (2: 5.8 ms, 162-168/s), for twice the rebuild
# work (46 against 21 s of optimize over the load; python -m bench.index.rebuild_segments).
REBUILD_SEGMENTS = 4
MERGED_SEGMENTS = 2


@dataclass(frozen=True)
class Launcher:
    data_dir: Path
    collection: str
    min_free_bytes: int
    log_format: str  # the settings' (app.telemetry.logs)
    key: bytes  # authenticates the connections to every engine of this run
    sockets: Path  # a directory only this user may enter

    @classmethod
    def new(
        cls,
        data_dir: Path,
        collection: str,
        min_free_bytes: int,
        log_format: str = "plain",
    ) -> "Launcher":
        sockets = Path(tempfile.mkdtemp(prefix="astrolabe-"))  # mode 0700
        return cls(data_dir, collection, min_free_bytes, log_format, os.urandom(32), sockets)

    @classmethod
    def of(cls, settings: "Settings") -> "Launcher":
        """The child is told what it needs of the settings: reading them itself would cost its
        start the settings' imports (~0.1 s) before it can open its shard."""
        return cls.new(
            settings.data_dir, settings.collection, settings.min_free_bytes, settings.log_format
        )

    def socket(self, number: int) -> str:
        """Short on purpose: a Unix socket path may not pass 107 bytes."""
        return str(self.sockets / f"engine-{number}.sock")

    def launch(
        self, socket: str, copy: Path | None = None, segments: int | None = None
    ) -> "subprocess.Popen[str]":
        """A shard server serving the generation in use, or (`copy`) rebuilding a copy, merging
        its segments down to `segments` (REBUILD_SEGMENTS if None)."""
        command = [sys.executable, "-m", CHILD_MODULE, "--socket", socket]
        command += ["--data-dir", str(self.data_dir), "--collection", self.collection]
        command += ["--parent", str(os.getpid()), "--min-free-bytes", str(self.min_free_bytes)]
        command += ["--log-format", self.log_format]
        if copy is not None:
            command += ["--shard", str(copy)]
        if segments is not None:
            command += ["--segments", str(segments)]
        return subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=os.environ | {KEY_ENV: self.key.hex()},
        )
