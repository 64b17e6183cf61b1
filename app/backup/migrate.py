"""Copy an embedded index to a Qdrant server collection: whole points (dense and sparse vectors,
payloads, pending placeholders) in batches, without re-embedding. A checkpoint file records the
next page to copy, so an interrupted run resumes there (a page copied twice is harmless: same
point ids). At the end the counts of both sides must agree."""

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from qdrant_client.http import models

from app.filters import selectors
from app.filters.selectors import Selector
from app.store.base import Store

BATCH_SIZE = 256


class PointSource(Protocol):
    def scroll_points(
        self, offset: str | None, limit: int
    ) -> tuple[list[models.PointStruct], str | None]: ...

    def count(self, filter: Selector | None = None) -> int: ...


class MigrationMismatch(RuntimeError):
    """The target's counts differ from the source's after the copy."""


@dataclass(frozen=True)
class Counts:
    points: int
    chunks: int
    pending: int


def count_points(store: PointSource | Store) -> Counts:
    return Counts(
        store.count(), store.count(selectors.chunks()), store.count(selectors.placeholders())
    )


@dataclass
class Checkpoint:
    """`offset`: the first point not yet copied to `target`; None: start from the beginning."""

    path: Path
    target: str

    def load(self) -> tuple[str | None, int]:
        if not self.path.exists():
            return None, 0
        saved = json.loads(self.path.read_text(encoding="utf-8"))
        if saved.get("target") != self.target:
            return None, 0  # a checkpoint of a copy to somewhere else
        return saved["offset"], int(saved["copied"])

    def save(self, offset: str, copied: int) -> None:
        record = {"target": self.target, "offset": offset, "copied": copied}
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(record), encoding="utf-8")
        temporary.replace(self.path)  # never a half-written checkpoint

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def copy_points(
    source: PointSource,
    target: Store,
    checkpoint: Checkpoint,
    batch_size: int = BATCH_SIZE,
    progress: Callable[[int], None] = lambda copied: None,
) -> int:
    """Copy every point from the checkpoint on; returns how many this run copied."""
    offset, copied_before = checkpoint.load()
    copied = 0
    while True:
        points, next_offset = source.scroll_points(offset, batch_size)
        target.upsert(points)
        copied += len(points)
        progress(len(points))
        if next_offset is None:
            return copied
        offset = next_offset
        checkpoint.save(offset, copied_before + copied)


def verify(source: PointSource, target: Store) -> Counts:
    expected, found = count_points(source), count_points(target)
    if found != expected:
        raise MigrationMismatch(
            f"counts differ after the copy: source {expected}, target {found}"
            " (was the target collection empty?)"
        )
    return found
