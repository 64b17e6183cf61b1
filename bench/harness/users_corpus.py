"""The users' corpus: what a personal or team cloud holds, where the bench's tiers hold long
abstracts every reader shares (issue 35: measured from outside on such a corpus, the service
was twice as slow as the tiers said).

100,000 short documents (12-20 words, ~16: windows of the Vaswani abstracts, so BM25's mean
length is ~10 tokens and a query's terms have long postings); 4 owners; a third of the documents
shared with one of two groups, so the searching user (`u0` in `g0`, as the bench's key) sees
~37.5 %; 100 folders of 10 subfolders; 1-3 of 20 tags; notes, files and Deck cards; dates over
one year. Queries are 6-word windows of the abstracts, asked again and again (a search page
pages, refines and refreshes)."""

import random
import re
from dataclasses import dataclass
from typing import Any

from app.ingest.documents import Document
from bench.harness.corpus import BENCH_GROUP, BENCH_USER, TAGS

USERS_SEED = 20261204
DOCUMENTS = 100_000
QUERIES = 100
OWNERS = (BENCH_USER, "u1", "u2", "u3")
GROUPS = (BENCH_GROUP, "g1")
FIRST_DAY = 1_735_689_600  # 2025-01-01
YEAR = 365 * 86_400
KINDS = (("file", 0.6), ("note", 0.3), ("deck_card", 0.1))
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class UsersCorpus:
    documents: list[Document]
    queries: list[str]


def _window(rng: random.Random, words: list[str], low: int, high: int) -> str:
    size = min(len(words), rng.randint(low, high))
    start = rng.randrange(len(words) - size + 1)
    return " ".join(words[start : start + size])


def _document(rng: random.Random, n: int, text: str) -> Document:
    owner = rng.choice(OWNERS)
    acl = [f"group:{rng.choice(GROUPS)}"] if rng.random() < 1 / 3 else []
    folder, sub = rng.randrange(100), rng.randrange(10)
    kind = rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
    doc_id = f"w{n:06d}"
    return Document(
        doc_type=kind,
        doc_id=doc_id,
        title="",
        content=text,
        owner=owner,
        modified_at=FIRST_DAY + rng.randrange(YEAR),
        file_path=f"/f{folder:02d}/s{sub}/{doc_id}.md" if kind != "deck_card" else None,
        tags=tuple(sorted(rng.sample(TAGS, rng.randint(1, 3)))),
        category=None,
        mime_type="text/markdown" if kind != "deck_card" else None,
        acl=tuple(acl),
    )


def users_corpus(docs: dict[str, str], count: int = DOCUMENTS) -> UsersCorpus:
    """`count` distinct windows with their metadata, and the queries (fixed seed)."""
    rng = random.Random(USERS_SEED)
    abstracts = [words for text in docs.values() if len(words := _WORD.findall(text)) >= 12]
    seen: set[str] = set()
    documents: list[Document] = []
    while len(documents) < count:
        text = _window(rng, rng.choice(abstracts), 12, 20)
        if text not in seen:
            seen.add(text)
            documents.append(_document(rng, len(documents), text))
    queries = [_window(rng, rng.choice(abstracts), 6, 6) for _ in range(QUERIES)]
    return UsersCorpus(documents, queries)


def users_scenarios() -> dict[str, dict[str, Any]]:
    """Request bodies (without `query`) for each row, as the search page sends them."""
    return {
        "hybrid, access rule only": {},
        "hybrid, one tag (~10 %)": {"tags": ["tag03"]},
        "hybrid, one folder (1 %)": {"path_prefixes": ["/f07"]},
        "hybrid, last quarter": {"modified_after": FIRST_DAY + 3 * YEAR // 4},
        "semantic": {"algorithm": "semantic"},
        "bm25": {"algorithm": "bm25"},
        "hybrid, granularity=document": {"granularity": "document"},
        "hybrid + facets": {"include_facets": True},
        "browse (no query)": {"browse": True},
    }


THROUGHPUT_FILTER = {"tags": ["tag03"]}  # the throughput rows: hybrid, a tag filter
