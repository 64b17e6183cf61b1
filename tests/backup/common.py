"""What the backup tests compare: a corpus, and twenty searches whose answers depend on the
documents only (single-word queries: BM25's IDF, which depends on the whole collection, scales
every score of such a query alike, so the order of a filtered subset does not move)."""

from collections.abc import Callable
from typing import Any

WORDS = ["lantern", "river", "budget", "winter", "garden"]
TAGS = ["red", "blue", "green"]


def note(n: int, doc_type: str = "note") -> dict[str, Any]:
    words = " ".join(f"{WORDS[(n + k) % 5]}{'s' * (k % 3)}" for k in range(3 + n % 11))
    return {
        "doc_type": doc_type,
        "doc_id": f"{doc_type[0]}{n}",
        "title": f"{doc_type.title()} {n}",
        "content": f"{doc_type.title()} {n} is about the {WORDS[n % 5]}. {words}.",
        "owner": "alice",
        "modified_at": 1_777_888_800 + n * 3_600,
        "tags": [TAGS[n % 3]],
    }


def twenty_searches() -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = []
    for word in WORDS:
        for algorithm in ("hybrid", "semantic", "bm25"):
            bodies.append({"query": word, "algorithm": algorithm})
    bodies += [
        {"query": "lantern", "granularity": "document"},
        {"query": "", "limit": 50},
        {"query": "", "tags": ["red"], "include_facets": True},
        {"query": "garden", "tags": ["blue"], "include_facets": True},
        {"query": "river", "fusion": "dbsf"},
    ]
    return [{"doc_types": ["note"], "limit": 20} | body for body in bodies]


def answers(search: Callable[[dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    """Per search: the results in order, the total and the tag facets (the doc_type facet
    counts the other doc types too: it ignores its own filter)."""
    found = []
    for body in twenty_searches():
        result = search(body)
        found.append(
            {
                "results": [(r["doc_id"], r["chunk_index"]) for r in result["results"]],
                "total_found": result["total_found"],
                "tags": (result.get("facets") or {}).get("tags"),
            }
        )
    return found
