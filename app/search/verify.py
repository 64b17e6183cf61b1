"""Verify-on-read: ask the source system whether the documents of a page still exist and are
readable by the user.

One search gets one budget: a deadline (`SEARCH_VERIFY_TIMEOUT`, counted from its first question,
covering every round and the reading of every answer body) and a bounded number of rounds. The
calls run in the verifier's own bounded pool, so a slow source holds neither the search threads
nor the event loop past the deadline. A timeout, a 5xx, a malformed answer or a spent budget keeps
every result (fail-open) and marks the search `degraded`."""

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from app.search.remote import JsonService, RemoteFailed

log = logging.getLogger(__name__)
DocRef = tuple[str, str]  # (doc_type, doc_id)
DROP_STATUSES = {"forbidden", "missing"}
MAX_ROUNDS = 6  # each round asks about twice the window of the one before (see SearchService)
POOL_SIZE = 16


class Verification(StrEnum):
    OK = "ok"  # the source answered every question
    SKIPPED = "skipped"  # no verify URL configured
    DEGRADED = "degraded"  # the source failed or the budget ran out: results kept (fail-open)


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


class VerifySource(Protocol):
    """Whatever answers verify-on-read: the remote verify URL, or Nextcloud itself through the
    connector (app.nextcloud.verify)."""

    def budget(self) -> VerifyBudget: ...

    def statuses(
        self, user: str, documents: Sequence[DocRef], budget: VerifyBudget
    ) -> dict[DocRef, str]: ...

    def close(self) -> None: ...


def degrade(budget: VerifyBudget, reason: str) -> dict[DocRef, str]:
    budget.degraded = True
    log.warning("verify-on-read failed, keeping all results (fail-open): %s", reason)
    return {}


class Verifier:
    """The remote verify URL (SEARCH_VERIFY_URL)."""

    def __init__(
        self,
        url: str,
        token: str | None,
        timeout: float,
        *,
        max_rounds: int = MAX_ROUNDS,
        pool_size: int = POOL_SIZE,
    ) -> None:
        self._timeout = timeout
        self._max_rounds = max_rounds
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._source = JsonService(url, headers, timeout, pool_size, "verify")

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
            return degrade(budget, "verify budget spent (deadline or rounds)")
        budget.rounds += 1
        body = {"user": user, "documents": [{"doc_type": t, "doc_id": i} for t, i in documents]}
        try:
            answer = self._source.post(body, budget.remaining())
            return self._parse(answer, set(documents))
        except (RemoteFailed, ValueError, TypeError, KeyError) as exc:
            return degrade(budget, str(exc))

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
        self._source.close()
