"""BM25 sparse vectors (tokenizer, English stopwords, Snowball stemmer, hashing): one encoder
for both backends. Term weights only; the engine applies IDF (`Modifier.IDF`).

A document's weight for a term is tf (k + 1) / (tf + k (1 - b + b len / avg_len)): `avg_len`
is the mean chunk length of the index in these tokens (`app.ingest.sparse_fit` keeps it), not
the library's default of 256, which left the length normalisation almost flat on short chunks.
k and b were chosen on two collections (docs/benchmarks.md, "Retrieval quality")."""

from collections.abc import Sequence
from functools import cache

import qdrant_edge as qe
from qdrant_client.http import models

from app.index_settings import BM25_B, BM25_K, BM25_LANGUAGE

DEFAULT_AVG_LEN = 256.0  # the library's own default: until an index has a measured mean


@cache
def _counter() -> qe.Bm25:
    """The same tokens with weight = their count: b = 0 makes a weight tf (k + 1) / (tf + k),
    which a huge k turns into tf itself."""
    return qe.Bm25(qe.Bm25Config(language=BM25_LANGUAGE, k=1e9, b=0.0))


def term_counts(text: str) -> models.SparseVector:
    """Each of the encoder's terms in `text` with the number of times it occurs."""
    vector = _counter().embed_document(text)
    return models.SparseVector(
        indices=list(vector.indices), values=[float(round(v)) for v in vector.values]
    )


def token_count(text: str) -> int:
    """The length BM25 normalises by: the text's tokens once stopwords are dropped."""
    return int(sum(term_counts(text).values))


class Bm25Encoder:
    def __init__(self, avg_len: float = DEFAULT_AVG_LEN) -> None:
        self.avg_len = avg_len
        self._bm25 = qe.Bm25(
            qe.Bm25Config(language=BM25_LANGUAGE, k=BM25_K, b=BM25_B, avg_len=avg_len)
        )

    def with_avg_len(self, avg_len: float) -> "Bm25Encoder":
        return self if avg_len == self.avg_len else Bm25Encoder(avg_len)

    def encode_documents(self, texts: Sequence[str]) -> list[models.SparseVector]:
        return [self._convert(self._bm25.embed_document(text)) for text in texts]

    def encode_query(self, text: str) -> models.SparseVector:
        """Each query term weighted by its count in the query: a term a long query repeats
        counts more (measured in docs/benchmarks.md; short queries rarely repeat one)."""
        return term_counts(text)

    @staticmethod
    def _convert(vector: qe.SparseVector) -> models.SparseVector:
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))
