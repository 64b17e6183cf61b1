"""Answers of reads (counts, facets, points' payloads) kept until the next write. Only for a store
that sees every write to its data (the embedded shard: its directory is locked to one process),
so a kept answer is always the exact answer the engine would give now."""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from qdrant_client.http import models

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


def filter_key(filter: models.Filter | None) -> str:
    """A filter as a memo key: equal filters, equal keys."""
    return "" if filter is None else filter.model_dump_json()


class ReadMemo:
    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._answers: OrderedDict[Hashable, object] = OrderedDict()
        self._generation = 0
        self._lock = threading.Lock()

    def invalidate(self) -> None:
        """After every write: nothing read before it is kept."""
        with self._lock:
            self._generation += 1
            self._answers.clear()

    def get(self, key: Hashable, read: Callable[[], T]) -> T:
        """The kept answer for `key`, or `read()` (kept unless a write came while it ran)."""
        with self._lock:
            if key in self._answers:
                self._answers.move_to_end(key)
                return self._answers[key]  # type: ignore[return-value]
            generation = self._generation
        answer = read()
        self._keep(generation, {key: answer})
        return answer

    def get_each(self, keys: Sequence[K], read: Callable[[list[K]], dict[K, T]]) -> dict[K, T]:
        """The kept answer of each key; those not kept are read together by `read`, which
        answers the ones it can (one it leaves out is neither answered nor kept)."""
        found: dict[K, T] = {}
        with self._lock:
            for key in keys:
                if key in self._answers:
                    self._answers.move_to_end(key)
                    found[key] = self._answers[key]  # type: ignore[assignment]
            generation = self._generation
        missing = [key for key in keys if key not in found]
        if not missing:
            return found
        answers = read(missing)
        self._keep(generation, answers)
        return found | answers

    def _keep(self, generation: int, answers: Mapping[Any, object]) -> None:
        """Kept unless a write came since `generation` was read."""
        with self._lock:
            if generation != self._generation:
                return
            self._answers.update(answers)
            while len(self._answers) > self._size:
                self._answers.popitem(last=False)
