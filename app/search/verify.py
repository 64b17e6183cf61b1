"""Verify-on-read: ask the source system whether the documents of a page still exist and are
readable by the user. A timeout, 5xx or malformed answer keeps every result (fail-open)."""

import logging
from collections.abc import Sequence

import httpx

log = logging.getLogger(__name__)
DocRef = tuple[str, str]  # (doc_type, doc_id)
DROP_STATUSES = {"forbidden", "missing"}


class Verifier:
    def __init__(self, url: str, token: str | None, timeout: float) -> None:
        self._url = url
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def statuses(self, user: str, documents: Sequence[DocRef]) -> dict[DocRef, str]:
        """Status per document that the source called forbidden or missing; {} when unsure."""
        if not documents:
            return {}
        body = {
            "user": user,
            "documents": [{"doc_type": t, "doc_id": i} for t, i in documents],
        }
        try:
            response = self._client.post(self._url, json=body)
            response.raise_for_status()
            return self._parse(response.json(), set(documents))
        except (httpx.HTTPError, ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("verify-on-read failed, keeping all results (fail-open): %s", exc)
            return {}

    @staticmethod
    def _parse(answer: object, asked: set[DocRef]) -> dict[DocRef, str]:
        if not isinstance(answer, dict) or not isinstance(answer.get("documents"), list):
            raise ValueError("answer has no 'documents' list")
        result: dict[DocRef, str] = {}
        for entry in answer["documents"]:
            ref = (str(entry["doc_type"]), str(entry["doc_id"]))
            status = entry["status"]
            if status not in {"ok", *DROP_STATUSES}:
                raise ValueError(f"unknown status {status!r}")
            if ref in asked and status in DROP_STATUSES:
                result[ref] = status
        return result

    def close(self) -> None:
        self._client.close()
