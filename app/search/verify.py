"""Verify-on-read: ask the source system whether the documents of a page still exist and are
readable by the user.

One search gets one budget: a deadline (`SEARCH_VERIFY_TIMEOUT`, counted from its first question,
covering every round and the reading of every answer body) and a bounded number of rounds. The
calls run in the verifier's own bounded pool, so a slow source holds neither the search threads
nor the event loop past the deadline. A timeout, a 5xx, a malformed answer or a spent budget keeps
every result (fail-open) and marks the search `degraded`."""

import json
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import httpx

log = logging.getLogger(__name__)
DocRef = tuple[str, str]  # (doc_type, doc_id)
DROP_STATUSES = {"forbidden", "missing"}
MAX_ROUNDS = 6  # each round asks about twice the window of the one before (see SearchService)
POOL_SIZE = 16
MAX_ANSWER_BYTES = 8 * 1024 * 1024


class Verification(StrEnum):
    OK = "ok"  # the source answered every question
    SKIPPED = "skipped"  # no verify URL configured
    DEGRADED = "degraded"  # the source failed or the budget ran out: results kept (fail-open)


class VerifyFailed(Exception):
    """The source gave no usable answer in time."""


@dataclass
class VerifyBudget:
    """One search's share of the source: one deadline for all rounds, a bounded round count."""

    timeout: float
    max_rounds: int
    deadline: float | None = None
    rounds: int = 0
    degraded: bool = False

    def remaining(self) -> float:
        if self.deadline is None:
            self.deadline = time.monotonic() + self.timeout
        return self.deadline - time.monotonic()

    def spent(self) -> bool:
        return self.degraded or self.rounds >= self.max_rounds or self.remaining() <= 0


class Verifier:
    def __init__(
        self,
        url: str,
        token: str | None,
        timeout: float,
        *,
        max_rounds: int = MAX_ROUNDS,
        pool_size: int = POOL_SIZE,
    ) -> None:
        self._url = url
        self._timeout = timeout
        self._max_rounds = max_rounds
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        limits = httpx.Limits(max_connections=pool_size, max_keepalive_connections=pool_size)
        self._client = httpx.Client(timeout=timeout, headers=headers, limits=limits)
        self._pool = ThreadPoolExecutor(pool_size, thread_name_prefix="astrolabe-verify")

    def budget(self) -> VerifyBudget:
        return VerifyBudget(self._timeout, self._max_rounds)

    def statuses(
        self, user: str, documents: Sequence[DocRef], budget: VerifyBudget
    ) -> dict[DocRef, str]:
        """Status per document that the source called forbidden or missing; {} when unsure
        (then `budget.degraded` says so and later rounds of this search ask nothing)."""
        if not documents or budget.degraded:
            return {}
        if budget.spent():
            return self._degrade(budget, "verify budget spent (deadline or rounds)")
        budget.rounds += 1
        body = {"user": user, "documents": [{"doc_type": t, "doc_id": i} for t, i in documents]}
        deadline = time.monotonic() + budget.remaining()
        future = self._pool.submit(self._ask, body, deadline)
        try:
            answer = future.result(timeout=max(budget.remaining(), 0.0))
            return self._parse(answer, set(documents))
        except FutureTimeout:
            future.cancel()  # still queued behind slow calls: never sent
            return self._degrade(budget, f"no answer within {self._timeout} s")
        except (VerifyFailed, httpx.HTTPError, ValueError, TypeError, KeyError) as exc:
            return self._degrade(budget, f"{type(exc).__name__}: {exc}")

    @staticmethod
    def _degrade(budget: VerifyBudget, reason: str) -> dict[DocRef, str]:
        budget.degraded = True
        log.warning("verify-on-read failed, keeping all results (fail-open): %s", reason)
        return {}

    def _ask(self, body: dict[str, Any], deadline: float) -> Any:
        """POST and read the answer, giving up at the deadline even if bytes keep trickling
        (httpx's timeouts bound each read, not the whole answer)."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise VerifyFailed("deadline passed before the request was sent")
        with self._client.stream("POST", self._url, json=body, timeout=remaining) as response:
            response.raise_for_status()
            received = bytearray()
            for chunk in response.iter_bytes():
                received += chunk
                if time.monotonic() > deadline:
                    raise VerifyFailed("answer still arriving at the deadline")
                if len(received) > MAX_ANSWER_BYTES:
                    raise VerifyFailed(f"answer over {MAX_ANSWER_BYTES} bytes")
        return json.loads(bytes(received))

    @staticmethod
    def _parse(answer: object, asked: set[DocRef]) -> dict[DocRef, str]:
        if not isinstance(answer, dict) or not isinstance(answer.get("documents"), list):
            raise ValueError("answer has no 'documents' list")
        result: dict[DocRef, str] = {}
        for entry in answer["documents"]:
            if not isinstance(entry, dict):
                raise ValueError("an entry of 'documents' is not an object")
            ref = (str(entry["doc_type"]), str(entry["doc_id"]))
            status = entry["status"]
            if status not in {"ok", *DROP_STATUSES}:
                raise ValueError(f"unknown status {status!r}")
            if ref in asked and status in DROP_STATUSES:
                result[ref] = status
        return result

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()
