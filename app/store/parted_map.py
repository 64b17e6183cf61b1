"""A map from strings kept in PARTS dicts by the key's hash, so that no insertion rehashes more
than one part. One dict of 1M point ids, filled 1,024 at a time as the facet index numbers a
restored index, rehashed its 699k entries in one step of 35 ms at the 699,051st insertion (18 ms
at half that), holding the interpreter: every search of the engine process waited, 2-3 s after
`/readyz` at 1M (48-65 ms searches), and again when the documents' keys were numbered."""

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

V = TypeVar("V")
PARTS = 256  # a part of a 1M-key map rehashes ~4k entries at most: ~0.1 ms


class PartedMap(Generic[V]):
    def __init__(self, pairs: Iterable[tuple[str, V]] = ()) -> None:
        self._parts: list[dict[str, V]] = [{} for _ in range(PARTS)]
        self.update(pairs)

    def _part(self, key: str) -> dict[str, V]:
        return self._parts[hash(key) % PARTS]

    def get(self, key: str) -> V | None:
        return self._part(key).get(key)

    def pop(self, key: str) -> V | None:
        return self._part(key).pop(key, None)

    def __setitem__(self, key: str, value: V) -> None:
        self._part(key)[key] = value

    def update(self, pairs: Iterable[tuple[str, V]]) -> None:
        for key, value in pairs:
            self._part(key)[key] = value

    def __len__(self) -> int:
        return sum(len(part) for part in self._parts)

    def items(self) -> Iterator[tuple[str, V]]:
        for part in self._parts:
            yield from part.items()
