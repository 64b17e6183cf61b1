"""Dense embeddings from an OpenAI-compatible server (`SEARCH_EMBEDDING_URL`): Text Embeddings
Inference, Infinity, vLLM, Ollama. Same interface as the local encoder; before it is used, a probe
sentence proves the server computes the local model's vector space (an index must never mix two)."""

import json
import logging
import math
import time
from collections.abc import Sequence
from importlib import resources
from typing import Any

import httpx

from app.errors import Unavailable
from app.index_settings import DIMENSION

log = logging.getLogger(__name__)

PROBE_SENTENCE = "Astrolabe probe: the quarterly budget report was filed under Projects."
MIN_PROBE_COSINE = 0.999
BATCH_SIZE = 64
TIMEOUT = httpx.Timeout(30.0, connect=5.0)
ATTEMPTS = 4
BACKOFF_SECONDS = 0.5
_RETRY_STATUS = {408, 429, 500, 502, 503, 504}


class EmbeddingUnavailable(Unavailable):
    """The embedding server cannot answer now (down, overloaded, timing out): try again later."""

    code = "embedding_unavailable"


class EmbeddingServerError(RuntimeError):
    """The embedding server answers, but not with what this service needs (a bad URL, key, model
    or response shape): retrying will not help, the configuration must change."""


class EmbeddingMismatch(EmbeddingServerError):
    """The server's model is not the local one: its vectors would not match the index."""


def reference_probe_vector() -> list[float]:
    """The local model's vector for PROBE_SENTENCE (a test recomputes it with the real model)."""
    text = resources.files("app.embeddings").joinpath("probe_vector.json").read_text("utf-8")
    vector: list[float] = json.loads(text)
    return vector


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _normalized(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


class RemoteEncoder:
    def __init__(
        self,
        url: str,
        model: str,
        api_key: str | None = None,
        *,
        batch_size: int = BATCH_SIZE,
        attempts: int = ATTEMPTS,
        backoff_seconds: float = BACKOFF_SECONDS,
        timeout: httpx.Timeout = TIMEOUT,
    ) -> None:
        self.name = model
        self.dimension = DIMENSION
        self._endpoint = url.rstrip("/") + "/embeddings"
        self._batch_size = batch_size
        self._attempts = attempts
        self._backoff = backoff_seconds
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._embed_batch(list(texts[start : start + self._batch_size])))
        return vectors

    def check_probe(self, reference: Sequence[float], minimum: float = MIN_PROBE_COSINE) -> float:
        """The server's vector for the probe sentence against the local model's; raises
        EmbeddingMismatch below `minimum`."""
        similarity = cosine(self.encode([PROBE_SENTENCE])[0], reference)
        if similarity < minimum:
            raise EmbeddingMismatch(
                f"the embedding server at {self._endpoint} (model '{self.name}') does not compute"
                f" the local model's vectors: probe cosine {similarity:.4f} < {minimum}; serve"
                " sentence-transformers/all-MiniLM-L6-v2 there or unset SEARCH_EMBEDDING_URL"
            )
        return similarity

    def close(self) -> None:
        self._client.close()

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        body = self._post({"model": self.name, "input": batch})
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or len(data) != len(batch):
            raise EmbeddingServerError(
                f"{self._endpoint} answered {len(batch)} inputs with a body without"
                f" {len(batch)} 'data' entries"
            )
        ordered = sorted(data, key=lambda item: int(item.get("index", 0)))
        vectors = [_normalized([float(x) for x in item["embedding"]]) for item in ordered]
        if any(len(v) != self.dimension for v in vectors):
            raise EmbeddingMismatch(
                f"{self._endpoint} returns vectors of {len(vectors[0])} dimensions,"
                f" the index holds {self.dimension}"
            )
        return vectors

    def _post(self, payload: dict[str, Any]) -> Any:
        """POST with bounded retries and exponential backoff on transient failures only."""
        problem = ""
        for attempt in range(self._attempts):
            if attempt:
                time.sleep(self._backoff * 2 ** (attempt - 1))
            try:
                response = self._client.post(self._endpoint, json=payload)
            except httpx.TransportError as exc:  # refused, reset, timed out
                problem = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code in _RETRY_STATUS:
                problem = f"HTTP {response.status_code}"
                continue
            if response.status_code != 200:
                raise EmbeddingServerError(
                    f"{self._endpoint} answered HTTP {response.status_code}: {response.text[:200]}"
                )
            try:
                return response.json()
            except ValueError as exc:
                raise EmbeddingServerError(f"{self._endpoint} answered non-JSON") from exc
        log.warning(
            "embedding server %s failed %d times: %s", self._endpoint, self._attempts, problem
        )
        raise EmbeddingUnavailable(
            f"the embedding server is unavailable ({problem} after {self._attempts} attempts)"
        )
