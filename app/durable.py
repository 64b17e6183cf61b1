"""Files written so that a crash leaves the old or the new content, never a mix."""

import os
from pathlib import Path


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` whole: a crash leaves the old or the new content, never a mix."""
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    partial.replace(path)
    fsync_dir(path.parent)
