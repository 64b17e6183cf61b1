"""Search texts embedded once while they are among the last ones asked for; the vectors are the
model's; batches (ingest) always go to the model."""

from collections.abc import Sequence

from app.embeddings.dense import HashingEncoder
from app.embeddings.query_cache import QueryVectorCache


class Counting(HashingEncoder):
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return super().encode(texts)


def test_a_recent_text_is_not_embedded_again() -> None:
    model = Counting()
    cache = QueryVectorCache(model, size=2)
    first = cache.encode(["comet orbit"])
    assert cache.encode(["comet orbit"]) == first == HashingEncoder().encode(["comet orbit"])
    assert model.calls == [["comet orbit"]]
    cache.encode(["budget"])
    cache.encode(["comet orbit"])  # the most recent again: "budget" is now the oldest
    cache.encode(["telescope"])  # pushes "budget" out
    cache.encode(["budget"])
    assert model.calls == [["comet orbit"], ["budget"], ["telescope"], ["budget"]]
    assert (cache.name, cache.dimension) == (model.name, model.dimension)


def test_batches_always_go_to_the_model() -> None:
    model = Counting()
    cache = QueryVectorCache(model)
    cache.encode(["a", "b"])
    cache.encode(["a", "b"])
    assert model.calls == [["a", "b"], ["a", "b"]]
