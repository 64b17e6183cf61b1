"""A dense encoder with an on-disk cache, behind the service's `DenseEncoder` interface: the
corpus is embedded once, reruns read the vectors back (keyed by the SHA-1 of the exact text)."""

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from app.embeddings.dense import DenseEncoder


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


class CachedEncoder:
    """Wraps a real encoder (built only on a cache miss); `save()` appends new vectors."""

    def __init__(
        self, cache_dir: Path, name: str, dimension: int, inner: Callable[[], DenseEncoder]
    ):
        self.name = name
        self.dimension = dimension
        self._inner_factory = inner
        self._inner: DenseEncoder | None = None
        safe = name.replace("/", "_")
        self._keys_path = cache_dir / f"{safe}.keys"
        self._vectors_path = cache_dir / f"{safe}.f32"
        cache_dir.mkdir(parents=True, exist_ok=True)
        self._rows: dict[str, int] = {}
        self._vectors = np.zeros((0, dimension), dtype=np.float32)
        if self._keys_path.exists():
            keys = self._keys_path.read_text().split()
            vectors = np.fromfile(self._vectors_path, dtype=np.float32).reshape(-1, dimension)
            keys = keys[: len(vectors)]  # a run killed mid-save leaves at most a torn tail
            self._rows = {key: row for row, key in enumerate(keys)}
            self._vectors = vectors[: len(keys)]
        self._pending_keys: list[str] = []
        self._pending: list[np.ndarray] = []
        self.misses = 0

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [row.tolist() for row in self.encode_array(texts)]

    def encode_array(self, texts: Sequence[str], batch: int = 256) -> np.ndarray:
        keys = [text_key(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._rows))
        if missing:
            by_key = dict(zip(keys, texts, strict=True))
            if self._inner is None:
                self._inner = self._inner_factory()
            for start in range(0, len(missing), batch):
                part = missing[start : start + batch]
                vectors = np.asarray(self._inner.encode([by_key[k] for k in part]), np.float32)
                self._add(part, vectors)
            self.misses += len(missing)
        return self._vectors[[self._rows[k] for k in keys]] if keys else self._vectors[:0]

    def _add(self, keys: list[str], vectors: np.ndarray) -> None:
        base = len(self._vectors)
        self._vectors = np.concatenate([self._vectors, vectors])
        for offset, key in enumerate(keys):
            self._rows[key] = base + offset
        self._pending_keys.extend(keys)
        self._pending.append(vectors)
        if len(self._pending_keys) >= 2048:
            self.save()

    def save(self) -> None:
        if not self._pending_keys:
            return
        with self._vectors_path.open("ab") as out:
            for vectors in self._pending:
                out.write(np.ascontiguousarray(vectors, np.float32).tobytes())
        with self._keys_path.open("a") as out:
            out.write("".join(f"{k}\n" for k in self._pending_keys))
        self._pending_keys, self._pending = [], []
