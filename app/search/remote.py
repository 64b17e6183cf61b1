"""A JSON service the search asks under a deadline (the verify-on-read source, the reranker):
calls run in the caller's own bounded pool, so a slow service holds neither the search threads
nor the event loop past the deadline, and an answer still trickling in at the deadline is cut.
The HTTP client is imported with the first service: a start without one does without it."""

import json
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

MAX_ANSWER_BYTES = 8 * 1024 * 1024


class RemoteFailed(Exception):
    """The service gave no usable answer in time."""


class JsonService:
    def __init__(
        self, url: str, headers: dict[str, str], timeout: float, pool_size: int, name: str
    ) -> None:
        import httpx

        self.url = url
        self.timeout = timeout
        limits = httpx.Limits(max_connections=pool_size, max_keepalive_connections=pool_size)
        self._client = httpx.Client(timeout=timeout, headers=headers, limits=limits)
        self._pool = ThreadPoolExecutor(pool_size, thread_name_prefix=f"astrolabe-{name}")

    def post(self, body: dict[str, Any], seconds: float) -> Any:
        """The decoded answer to `body`, or RemoteFailed after `seconds` or on any failure."""
        deadline = time.monotonic() + seconds
        future = self._pool.submit(self._ask, body, deadline)
        try:
            return future.result(timeout=max(seconds, 0.0))
        except FutureTimeout:
            future.cancel()  # still queued behind slow calls: never sent
            raise RemoteFailed(f"no answer within {self.timeout} s") from None

    def _ask(self, body: dict[str, Any], deadline: float) -> Any:
        """POST and read the answer, giving up at the deadline even if bytes keep trickling
        (httpx's timeouts bound each read, not the whole answer)."""
        import httpx

        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RemoteFailed("deadline passed before the request was sent")
        try:
            return json.loads(bytes(self._read(body, deadline, remaining)))
        except (httpx.HTTPError, ValueError) as exc:  # ValueError: not JSON
            raise RemoteFailed(f"{type(exc).__name__}: {exc}") from exc

    def _read(self, body: dict[str, Any], deadline: float, remaining: float) -> bytearray:
        with self._client.stream("POST", self.url, json=body, timeout=remaining) as response:
            response.raise_for_status()
            received = bytearray()
            for chunk in response.iter_bytes():
                received += chunk
                if time.monotonic() > deadline:
                    raise RemoteFailed("answer still arriving at the deadline")
                if len(received) > MAX_ANSWER_BYTES:
                    raise RemoteFailed(f"answer over {MAX_ANSWER_BYTES} bytes")
        return received

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()
