"""all-MiniLM-L6-v2 on sentence-transformers (torch): the reference the ONNX encoder is checked
against and the source of its export. Never imported by the serving path."""

import os
from collections.abc import Sequence
from typing import Any

from app.embeddings.model_files import MAX_SEQ_LENGTH, weights_dir
from app.index_settings import DIMENSION, MODEL_NAME


def load_sentence_transformer() -> Any:
    """The shipped weights on the CPU; nothing is downloaded."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(weights_dir()), device="cpu")
    model.max_seq_length = MAX_SEQ_LENGTH
    return model.eval()


class SentenceTransformerEncoder:
    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(self, batch_size: int = 32) -> None:
        self._model = load_sentence_transformer()
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
