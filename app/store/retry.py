"""Bounded retries with exponential backoff for transient engine failures (a node restarting, a
leader election, a dropped connection). Every store write is idempotent (fixed point ids, deletes
by filter), so a write retried after a lost answer does no harm."""

import logging
import time
from collections.abc import Callable
from typing import TypeVar

import httpx
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

log = logging.getLogger(__name__)
R = TypeVar("R")
ATTEMPTS = 3
BACKOFF_SECONDS = 0.2
_TRANSIENT_STATUS = {429, 502, 503, 504}


def is_transient(exc: Exception) -> bool:
    """Down, restarting, overloaded or behind a failing proxy: worth another try."""
    if isinstance(exc, UnexpectedResponse):
        return exc.status_code in _TRANSIENT_STATUS
    if isinstance(exc, httpx.TransportError | ResponseHandlingException | ConnectionError):
        return True
    code = getattr(exc, "code", None)  # grpc.RpcError, without importing grpc
    name = getattr(code() if callable(code) else None, "name", "")
    return name in {"UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED"}


def is_engine_answer(exc: Exception) -> bool:
    """Qdrant answered, with an error status (REST) or code (gRPC)."""
    return isinstance(exc, UnexpectedResponse) or callable(getattr(exc, "code", None))


def with_retries(
    call: Callable[[], R], attempts: int = ATTEMPTS, backoff_seconds: float = BACKOFF_SECONDS
) -> R:
    for attempt in range(attempts - 1):
        try:
            return call()
        except Exception as exc:
            if not is_transient(exc):
                raise
            delay = backoff_seconds * 2**attempt
            log.warning("transient engine error (%s), retrying in %.1f s", exc, delay)
            time.sleep(delay)
    return call()  # the last attempt: its error is the caller's
