"""The settings that shape the stored data: the dense model and its dimension, the BM25
parameters and the chunk size. `index.json` records them (`app.store.index_format`); an index
written with others must be re-embedded (`astrolabe-search reindex`) before this release serves
it. Declared here, below every layer, so the store can check them without knowing the
embedders or the chunker that use them. How the engine keeps and searches the vectors (int8
quantization, the graph) is not among them: it changes no stored value, and an index picks it
up when it is rebuilt (`app.store.quantization`)."""

from dataclasses import asdict, dataclass
from typing import Any

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
# BM25: k and b were chosen on two collections (docs/benchmarks.md, "Retrieval quality").
BM25_K = 1.2
BM25_B = 0.4
BM25_LANGUAGE = "english"
# Words stand in for model tokens: MiniLM's 256 word pieces hold about 180 English words.
CHUNK_WORDS = 180


def bm25_parameters() -> dict[str, Any]:
    """The parameters that shape the stored sparse vectors. The mean chunk length is not one of
    them: it is a statistic the index keeps and re-fits itself (`app.ingest.sparse_fit`)."""
    return {"k": BM25_K, "b": BM25_B, "tokenizer": "word", "language": BM25_LANGUAGE}


@dataclass(frozen=True)
class IndexSettings:
    model: str
    dimension: int
    bm25: dict[str, Any]
    chunk_words: int

    @classmethod
    def current(cls) -> "IndexSettings":
        """This release's: a remote embedding server is only used once its probe proved it
        computes the local model's vectors, so the model is always this one."""
        return cls(MODEL_NAME, DIMENSION, bm25_parameters(), CHUNK_WORDS)

    @classmethod
    def from_record(cls, record: Any) -> "IndexSettings":
        """ValueError when `record` is not one `to_record` wrote."""
        try:
            return cls(
                str(record["model"]),
                int(record["dimension"]),
                dict(record["bm25"]),
                int(record["chunk_words"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(repr(exc)) from exc

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


def bm25_changes(recorded: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """The BM25 parameters that differ (the one place that compares them)."""
    names = sorted(recorded | current)
    return [f"bm25.{name}" for name in names if recorded.get(name) != current.get(name)]


def changes(recorded: IndexSettings, current: IndexSettings) -> list[str]:
    """The names of the settings that differ."""
    named = [
        name
        for name in ("model", "dimension", "chunk_words")
        if getattr(recorded, name) != getattr(current, name)
    ]
    return named + bm25_changes(recorded.bm25, current.bm25)


# What release 0.1.0 wrote every index with (it recorded nothing).
RELEASE_0_1_0 = IndexSettings(
    MODEL_NAME,
    384,
    {"k": 1.2, "b": 0.75, "tokenizer": "word", "language": "english"},  # and a mean length 256
    180,
)
