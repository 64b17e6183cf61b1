"""BM25 sparse vectors (tokenizer, English stopwords, Snowball stemmer, hashing): one encoder
for both backends. Term weights only; the engine applies IDF (`Modifier.IDF`)."""

from collections.abc import Sequence
from typing import Any

import qdrant_edge as qe
from qdrant_client import models


def _config() -> qe.Bm25Config:
    return qe.Bm25Config(language="english")


def bm25_parameters() -> dict[str, Any]:
    """The parameters that shape the stored sparse vectors, as `index.json` records them
    (`app.store.index_format`): a change makes an index written before it need a reindex."""
    config = _config()
    return {
        "k": config.k,
        "b": config.b,
        "avg_len": config.avg_len,
        "tokenizer": str(config.tokenizer).rsplit(".", 1)[-1].lower(),
        "language": config.language,
    }


class Bm25Encoder:
    def __init__(self) -> None:
        self._bm25 = qe.Bm25(_config())

    def encode_documents(self, texts: Sequence[str]) -> list[models.SparseVector]:
        return [self._convert(self._bm25.embed_document(text)) for text in texts]

    def encode_query(self, text: str) -> models.SparseVector:
        return self._convert(self._bm25.embed_query(text))

    @staticmethod
    def _convert(vector: qe.SparseVector) -> models.SparseVector:
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))
