"""The query vectors of recent search texts, kept: paging, changing a filter or a sort, and the
search page's refreshes send the same text again, and its embedding is most of a search's CPU
(~4.3 ms of ~15 ms for a hybrid search at 100k chunks, all processes counted)."""

import threading
from collections import OrderedDict
from collections.abc import Sequence

from app.embeddings.dense import DenseEncoder

QUERIES_KEPT = 4096  # ~1.5 KiB a vector: 6 MiB at most


class QueryVectorCache:
    """A `DenseEncoder` for search texts (one at a time) that remembers the last QUERIES_KEPT;
    anything else goes to the model as it is."""

    def __init__(self, model: DenseEncoder, size: int = QUERIES_KEPT) -> None:
        self.name = model.name
        self.dimension = model.dimension
        self._model = model
        self._size = size
        self._kept: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        if len(texts) != 1:
            return self._model.encode(texts)
        text = texts[0]
        with self._lock:
            vector = self._kept.get(text)
            if vector is not None:
                self._kept.move_to_end(text)
                return [vector]
        (vector,) = self._model.encode([text])
        with self._lock:
            self._kept[text] = vector
            if len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return [vector]
