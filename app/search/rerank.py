"""An optional remote reranker (`SEARCH_RERANK_URL`) speaking the common `/rerank` protocol of
TEI, Infinity, Jina and Cohere: POST {"model", "query", "documents": [...], "top_n"} ->
{"results": [{"index", "relevance_score"}, ...]}. It reorders a search's first candidates within
the search's one deadline (the verify-on-read deadline); a failure or a late answer leaves the
retrieval order (fail-open), and the search says so."""

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from app.search.remote import JsonService, RemoteFailed

log = logging.getLogger(__name__)
DEFAULT_TOP_N = 30
POOL_SIZE = 16


@dataclass(frozen=True)
class Ranked:
    index: int  # into the documents sent
    score: float  # the reranker's relevance, clipped to [0, 1]


def endpoint(url: str) -> str:
    """A base URL gets `/rerank`; a URL that already ends with it is taken as it is."""
    trimmed = url.rstrip("/")
    return trimmed if trimmed.endswith("/rerank") else f"{trimmed}/rerank"


class Reranker:
    def __init__(
        self,
        url: str,
        model: str | None,
        api_key: str | None,
        timeout: float,
        top_n: int = DEFAULT_TOP_N,
    ) -> None:
        self.model = model
        self.top_n = top_n
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._service = JsonService(endpoint(url), headers, timeout, POOL_SIZE, "rerank")

    def rerank(self, query: str, documents: Sequence[str], seconds: float) -> list[Ranked] | None:
        """The documents' order by relevance, best first (those the answer leaves out are
        left out); None when the reranker failed or did not answer within `seconds`."""
        if not documents:
            return []
        body: dict[str, object] = {
            "query": query,
            "documents": list(documents),
            "top_n": len(documents),
        }
        if self.model:
            body["model"] = self.model
        try:
            if seconds <= 0:
                raise RemoteFailed("the search's deadline has passed")
            return _parse(self._service.post(body, seconds), len(documents))
        except (RemoteFailed, ValueError, TypeError, KeyError) as exc:
            log.warning("rerank failed, keeping the retrieval order: %s", exc)
            return None

    def close(self) -> None:
        self._service.close()


def _parse(answer: object, sent: int) -> list[Ranked]:
    entries = answer.get("results") if isinstance(answer, dict) else None
    if not isinstance(entries, list):
        raise ValueError("answer has no 'results' list")
    ranked: dict[int, float] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise ValueError("an entry of 'results' is not an object")
        index, score = entry["index"], entry["relevance_score"]
        if type(index) is not int or not 0 <= index < sent:
            raise ValueError(f"index {index!r} is not one of the {sent} documents sent")
        if type(score) not in (int, float):
            raise ValueError(f"relevance_score {score!r} is not a number")
        ranked[index] = min(1.0, max(0.0, float(score)))
    order = sorted(ranked.items(), key=lambda item: (-item[1], item[0]))
    return [Ranked(index, score) for index, score in order]
