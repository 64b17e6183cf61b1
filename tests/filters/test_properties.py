"""Property: for random corpora, users and filter combinations, every search path returns what a
brute-force oracle over the same documents says -- each result satisfies the filter and the
access rule, and a page holds exactly min(limit, matches) results.

The documents are a few words long (one chunk each) from a small vocabulary of plain nouns that
BM25 keeps as terms, so "matches" is exact for every algorithm: every visible chunk under the
filter for semantic, hybrid and browse; for bm25 only those sharing a term with the query."""

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import event, given, settings, target
from hypothesis import strategies as st

from app.embeddings.dense import HashingEncoder
from tests.helpers import auth, index, running_app

MAY_4 = 1_777_888_800  # 2026-05-04T10:00:00Z
DAY = 86_400
WORDS = ("apple", "river", "engine", "violin", "garden", "copper")
QUERY_WORDS = (*WORDS, "falcon")  # "falcon" occurs in no document
OWNERS = ("alice", "bob", "carol")
USERS = (*OWNERS, "dave")
GROUPS = ("eng", "ops")
ACL_ENTRIES = ("user:alice", "user:bob", "user:carol", "user:dave", "group:eng", "group:ops")
DOC_TYPES = ("note", "file", "deck_card")
PATHS = (
    "/Projects",
    "/Projects/a.md",
    "/Projects/x/b.md",
    "/Projects-old/c.md",
    "/Archive/Projects/d.md",
    "/Archive/e.md",
    "/top.md",
)
FOLDERS = (
    "/",
    "/Projects",
    "Projects/",
    " /Projects/ ",
    "/Projects/x",
    "/Projects-old",
    "/Archive",
    "/Archive/Projects",
    "/projects",
    "/Proj",
)
DATES = (MAY_4 - DAY, MAY_4 - 1, MAY_4, MAY_4 + 1)  # few values: bounds often hit a date
TAGS = ("red", "blue", "green", "urgent", "finance")
CATEGORIES = ("Work", "Home")
PLUS_2 = timezone(timedelta(hours=2))


@dataclass(frozen=True)
class Doc:
    doc_type: str
    doc_id: str
    title: str
    content: str
    owner: str
    acl: tuple[str, ...]
    modified_at: int
    file_path: str | None
    tags: tuple[str, ...]
    category: str | None

    @property
    def key(self) -> tuple[str, str]:
        return (self.doc_type, self.doc_id)

    @property
    def terms(self) -> set[str]:
        return set(f"{self.title} {self.content}".split())

    def body(self, date_form: int) -> dict[str, Any]:
        return {
            "doc_type": self.doc_type,
            "doc_id": self.doc_id,
            "title": self.title,
            "content": self.content,
            "owner": self.owner,
            "acl": list(self.acl),
            "modified_at": render_date(self.modified_at, date_form),
            "file_path": self.file_path,
            "tags": list(self.tags),
            "category": self.category,
        }


def render_date(seconds: int, form: int) -> int | str:
    """The same instant as Unix seconds, a digit string, RFC 3339 `Z` or a +02:00 offset."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return (
        seconds,
        str(seconds),
        moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        moment.astimezone(PLUS_2).isoformat(),
    )[form % 4]


@st.composite
def corpora(draw: st.DrawFn) -> list[Doc]:
    docs = []
    for i in range(draw(st.integers(5, 30))):
        docs.append(
            Doc(
                doc_type=draw(st.sampled_from(("file", *DOC_TYPES))),  # files are half
                doc_id=str(i),
                title=draw(st.sampled_from(("", *WORDS))),
                content=" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))),
                owner=draw(st.sampled_from(OWNERS)),
                acl=tuple(draw(st.lists(st.sampled_from(ACL_ENTRIES), max_size=3, unique=True))),
                modified_at=draw(st.sampled_from(DATES)),
                # Notes and cards get paths too: only files may ever match a folder.
                file_path=draw(st.sampled_from((None, *PATHS))),
                tags=tuple(draw(st.lists(st.sampled_from(TAGS), max_size=3, unique=True))),
                category=draw(st.sampled_from((None, *CATEGORIES))),
            )
        )
    return docs


SOMETIMES = st.sampled_from((True, False, False, False))  # each filter in about one search in 4


@st.composite
def searches(draw: st.DrawFn) -> tuple[str, list[str], dict[str, Any]]:
    """(user, groups, request body)."""
    user = draw(st.sampled_from(USERS))
    groups = draw(st.lists(st.sampled_from(GROUPS), unique=True))
    browse = draw(st.booleans()) and draw(st.booleans())  # about a quarter of the searches
    words = draw(st.lists(st.sampled_from(QUERY_WORDS), min_size=1, max_size=2))
    body: dict[str, Any] = {
        "query": "" if browse else " ".join(words),
        "algorithm": draw(st.sampled_from(("hybrid", "semantic", "bm25"))),
        "granularity": draw(st.sampled_from(("chunk", "document"))),
        "limit": draw(st.integers(1, 40)),
        "include_facets": draw(st.booleans()),
    }
    after = draw(st.sampled_from(DATES)) if draw(SOMETIMES) else None
    before = draw(st.sampled_from(DATES)) if draw(SOMETIMES) else None
    if after is not None and before is not None and after > before:
        after, before = before, after
    for name, bound in (("modified_after", after), ("modified_before", before)):
        if bound is not None:
            body[name] = render_date(bound, draw(st.integers(0, 3)))
    lists = {
        "doc_types": (*DOC_TYPES, "news_item"),
        "path_prefixes": FOLDERS,
        "tags": TAGS,
        "tags_all": TAGS,
        "categories": (*CATEGORIES, "Travel"),
        "owners": USERS,
    }
    for name, values in lists.items():
        if draw(SOMETIMES):
            body[name] = draw(st.lists(st.sampled_from(values), min_size=1, max_size=3))
    if draw(SOMETIMES):
        body["path_prefix"] = draw(st.sampled_from(FOLDERS))
    return user, groups, body


# --- the oracle --------------------------------------------------------------------------------


def normalize_folder(raw: str) -> str:
    text = raw.strip()
    return ("/" + text.lstrip("/")).rstrip("/") or "/"


def to_seconds(value: int | str) -> int:
    if isinstance(value, int) or value.isdigit():
        return int(value)
    return int(datetime.fromisoformat(value).timestamp())


def visible(doc: Doc, user: str, groups: list[str]) -> bool:
    readers = {f"user:{user}", *(f"group:{group}" for group in groups)}
    return doc.owner == user or bool(readers & set(doc.acl))


def in_folder(doc: Doc, folder: str) -> bool:
    if doc.doc_type != "file" or doc.file_path is None:
        return False
    return folder == "/" or doc.file_path == folder or doc.file_path.startswith(folder + "/")


def passes(doc: Doc, body: dict[str, Any], ignore: tuple[str, ...] = ()) -> bool:
    """The filters of `body` except those named in `ignore` (access not included)."""
    checks: dict[str, Callable[[Any], bool]] = {
        "doc_types": lambda v: doc.doc_type in v,
        "modified_after": lambda v: doc.modified_at >= to_seconds(v),
        "modified_before": lambda v: doc.modified_at <= to_seconds(v),
        "tags": lambda v: bool(set(v) & set(doc.tags)),
        "tags_all": lambda v: set(v) <= set(doc.tags),
        "categories": lambda v: doc.category in v,
        "owners": lambda v: doc.owner in v,
    }
    for name, check in checks.items():
        if name in body and name not in ignore and not check(body[name]):
            return False
    if "path_prefixes" in ignore:
        return True
    raw = [body["path_prefix"]] if "path_prefix" in body else []
    folders = [normalize_folder(f) for f in raw + body.get("path_prefixes", [])]
    return not folders or any(in_folder(doc, folder) for folder in folders)


def expected_facets(
    corpus: list[Doc], user: str, groups: list[str], body: dict[str, Any]
) -> dict[str, dict[str, int]]:
    seen = [doc for doc in corpus if visible(doc, user, groups)]

    def count(
        ignore: tuple[str, ...], values: Callable[[Doc], Iterable[str | None]]
    ) -> dict[str, int]:
        counter: Counter[str] = Counter()
        for doc in seen:
            if passes(doc, body, ignore):
                counter.update(v for v in values(doc) if v is not None)
        return dict(counter)

    return {
        "doc_type": count(("doc_types",), lambda d: [d.doc_type]),
        "tags": count(("tags", "tags_all"), lambda d: d.tags),
        "category": count(("categories",), lambda d: [d.category]),
        "owner": count(("owners",), lambda d: [d.owner]),
    }


# --- the property ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One app for every example; each example deletes what it indexed."""
    with running_app(tmp_path_factory.mktemp("property"), HashingEncoder()) as client:
        yield client


def check_search(
    client: TestClient, corpus: list[Doc], user: str, groups: list[str], body: dict[str, Any]
) -> int:
    """Check one search against the oracle; the number of matches."""
    response = client.post("/api/v1/search", json=body, headers=auth(user, groups))
    assert response.status_code == 200, response.text
    result = response.json()
    browse = not body["query"]
    query_terms = set(body["query"].split())
    matching = {
        doc.key: doc
        for doc in corpus
        if visible(doc, user, groups)
        and passes(doc, body)
        and (browse or body["algorithm"] != "bm25" or bool(query_terms & doc.terms))
    }
    found = [(r["doc_type"], r["doc_id"]) for r in result["results"]]
    for key in found:
        assert key in matching, f"{key} does not match: {body}"
    assert len(found) == len(set(found))  # one chunk a document
    assert len(found) == min(body["limit"], len(matching))
    assert result["total_found"] == len(matching)
    if browse:
        dates = [matching[key].modified_at for key in found]
        assert dates == sorted(dates, reverse=True)
    if body["include_facets"] and (browse or body["algorithm"] != "bm25"):
        facets = {k: v for k, v in result["facets"].items() if k != "folders"}
        assert facets == expected_facets(corpus, user, groups, body)
    return len(matching)


@settings(max_examples=30, deadline=None)
@given(
    corpus=corpora(),
    date_forms=st.lists(st.integers(0, 3), min_size=30, max_size=30),
    queries=st.lists(searches(), min_size=2, max_size=6),
)
def test_every_search_matches_the_oracle(
    shared: TestClient,
    corpus: list[Doc],
    date_forms: list[int],
    queries: list[tuple[str, list[str], dict[str, Any]]],
) -> None:
    status = shared.get("/api/v1/status", headers=auth()).json()
    assert (status["documents"], status["pending"]) == (0, 0), "a previous example left documents"
    index(shared, *(doc.body(form) for doc, form in zip(corpus, date_forms, strict=False)))
    try:
        matches = [check_search(shared, corpus, *query) for query in queries]
    finally:
        for doc in corpus:
            path = f"/api/v1/documents/{doc.doc_type}/{doc.doc_id}"
            assert shared.delete(path, headers=auth()).status_code == 204
    cut = any(found > body["limit"] for found, (_, _, body) in zip(matches, queries, strict=True))
    event(f"searches with matches: {sum(1 for found in matches if found)} of {len(matches)}")
    event(f"a page cut by its limit: {cut}")
    target(float(sum(matches)), label="matches")
