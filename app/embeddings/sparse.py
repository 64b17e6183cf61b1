"""BM25 sparse vectors (tokenizer, English stopwords, Snowball stemmer, hashing): one encoder
for both backends. Term weights only; the engine applies IDF (`Modifier.IDF`)."""

from collections.abc import Sequence

import qdrant_edge as qe
from qdrant_client import models


class Bm25Encoder:
    def __init__(self) -> None:
        self._bm25 = qe.Bm25(qe.Bm25Config(language="english"))

    def encode_documents(self, texts: Sequence[str]) -> list[models.SparseVector]:
        return [self._convert(self._bm25.embed_document(text)) for text in texts]

    def encode_query(self, text: str) -> models.SparseVector:
        return self._convert(self._bm25.embed_query(text))

    @staticmethod
    def _convert(vector: qe.SparseVector) -> models.SparseVector:
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))
