"""Tags, categories, owners and doc types through the HTTP API, combined with AND, and the same
filter honoured by every algorithm and granularity."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import (
    ALGORITHMS,
    DAY,
    LONG,
    MAY_4,
    MODES,
    auth,
    browse,
    doc,
    ids,
    index,
    search,
    shared_app,
    viz,
)

# --- tags, categories, owners, doc types -------------------------------------------------------


def test_tags_is_any_of_and_tags_all_is_all_of(client: TestClient) -> None:
    index(
        client,
        doc("red", tags=["red"]),
        doc("both", tags=["red", "blue"]),
        doc("blue", tags=["blue"]),
        doc("none"),
    )
    assert browse(client, tags=["red", "blue"]) == ["blue", "both", "red"]
    assert browse(client, tags_all=["red", "blue"]) == ["both"]
    assert browse(client, tags_all=["red"]) == ["both", "red"]
    assert browse(client, tags=["blue"], tags_all=["red"]) == ["both"]
    assert browse(client, tags=["green"]) == []
    assert browse(client, tags_all=["red", "green"]) == []


def test_categories_are_any_of(client: TestClient) -> None:
    index(client, doc("w", category="Work"), doc("h", category="Home"), doc("none"))
    assert browse(client, categories=["Work"]) == ["w"]
    assert browse(client, categories=["Work", "Home"]) == ["h", "w"]
    assert browse(client, categories=["Travel"]) == []


def test_doc_types_are_any_of(client: TestClient) -> None:
    index(
        client,
        doc("1"),
        doc("2", doc_type="file", file_path="/x.md"),
        doc("3", doc_type="deck_card"),
    )
    assert browse(client, doc_types=["file", "deck_card"]) == ["2", "3"]
    assert browse(client, doc_types=["note"]) == ["1"]
    assert browse(client, doc_types=["news_item"]) == []


OWNER_DOCS = [
    doc("mine", "budget plan", owner="alice"),
    doc("shared", "budget plan", owner="bob", acl=["user:alice"]),
    doc("team", "budget plan", owner="bob", acl=["group:eng"]),
    doc("hidden", "budget plan", owner="bob"),
    doc("carols", "budget plan", owner="carol", acl=["group:ops"]),
]


@pytest.fixture(scope="module")
def owned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    yield from shared_app(tmp_path_factory, *OWNER_DOCS)


def test_owners_filter_only_within_what_the_user_may_see(owned: TestClient) -> None:
    assert browse(owned, owners=["bob"]) == ["shared"]
    assert browse(owned, owners=["bob", "carol"]) == ["shared"]
    assert browse(owned, owners=["carol"]) == []
    assert browse(owned, owners=["alice"]) == ["mine"]
    assert browse(owned, user="bob", owners=["alice"]) == []
    assert browse(owned, user="carol", owners=["bob"]) == []
    member = search(owned, groups=["eng", "ops"], query="", owners=["bob", "carol"])
    assert sorted(ids(member)) == ["carols", "shared", "team"]


def test_owners_filter_never_reveals_hidden_documents_by_any_path(owned: TestClient) -> None:
    for algorithm in ALGORITHMS:
        for granularity in ("chunk", "document"):
            result = search(
                owned,
                query="budget plan",
                algorithm=algorithm,
                granularity=granularity,
                owners=["bob", "carol"],
                include_facets=True,
            )
            assert ids(result) == ["shared"], (algorithm, granularity)
            assert result["total_found"] == 1
            assert result["facets"]["owner"] == {"alice": 1, "bob": 1}
    status, body = viz(owned, query="budget plan")
    assert status == 200 and sorted(ids(body)) == ["mine", "shared"]


def test_filters_combine_with_and(client: TestClient) -> None:
    base: dict[str, Any] = {
        "doc_type": "file",
        "tags": ["red", "blue"],
        "category": "Work",
        "modified_at": MAY_4,
    }
    index(
        client,
        doc("match", **(base | {"file_path": "/Projects/m.md"})),
        doc("note", **(base | {"doc_type": "note", "file_path": "/Projects/n.md"})),
        doc("elsewhere", **(base | {"file_path": "/Archive/m.md"})),
        doc("green", **(base | {"file_path": "/Projects/g.md", "tags": ["green", "blue"]})),
        doc("only-red", **(base | {"file_path": "/Projects/r.md", "tags": ["red"]})),
        doc("home", **(base | {"file_path": "/Projects/h.md", "category": "Home"})),
        doc("old", **(base | {"file_path": "/Projects/o.md", "modified_at": MAY_4 - DAY})),
        doc("new", **(base | {"file_path": "/Projects/w.md", "modified_at": MAY_4 + DAY})),
        doc("bobs", **(base | {"file_path": "/Projects/b.md"}), owner="bob", acl=["user:alice"]),
    )
    filters: dict[str, Any] = {
        "doc_types": ["file", "deck_card"],
        "path_prefixes": ["/Projects"],
        "tags": ["red", "orange"],
        "tags_all": ["blue"],
        "categories": ["Work"],
        "modified_after": "2026-05-04",
        "modified_before": "2026-05-04T23:59:59Z",
        "owners": ["alice"],
    }
    assert browse(client, **filters) == ["match"]
    for algorithm in ALGORITHMS:
        result = search(client, query="plain text", algorithm=algorithm, limit=100, **filters)
        assert ids(result) == ["match"], algorithm
    # Each filter is active: dropping one lets exactly the document it excluded back in (a note
    # never matches a folder filter, so the doc type is only seen without the folder as well).
    dropped = {
        ("path_prefixes",): ["elsewhere"],
        ("tags",): ["green"],
        ("tags_all",): ["only-red"],
        ("categories",): ["home"],
        ("modified_after",): ["old"],
        ("modified_before",): ["new"],
        ("owners",): ["bobs"],
        ("path_prefixes", "doc_types"): ["elsewhere", "note"],
    }
    for names, come_back in dropped.items():
        rest = {k: v for k, v in filters.items() if k not in names}
        assert browse(client, **rest) == sorted(["match", *come_back]), names


# --- every algorithm and granularity honour the same filter ------------------------------------

IN = {"doc_type": "file", "tags": ["keep"], "category": "Keep", "modified_at": MAY_4}
OUT = {"tags": ["drop"], "category": "Drop", "modified_at": MAY_4 - DAY}
SAME_FILTERS: list[dict[str, Any]] = [
    {"tags": ["keep"]},
    {"tags_all": ["keep"]},
    {"categories": ["Keep"]},
    {"doc_types": ["file"]},
    {"path_prefixes": ["/In"]},
    {"modified_after": "2026-05-04T10:00:00Z"},
    {"owners": ["alice"]},
]


@pytest.fixture(scope="module")
def in_and_out(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """Two documents (one long) inside every filter of SAME_FILTERS, two (one long) outside."""
    yield from shared_app(
        tmp_path_factory,
        doc("long-in", LONG, file_path="/In/long.md", **IN),
        doc("short-in", "lantern garden notes", file_path="/In/deep/short.md", **IN),
        doc("long-out", LONG, owner="bob", acl=["user:alice"], **OUT),
        doc(
            "short-out",
            "lantern garden notes",
            doc_type="deck_card",
            owner="bob",
            acl=["group:eng"],
            **OUT,
        ),
    )


@pytest.mark.parametrize("filters", SAME_FILTERS, ids=lambda f: next(iter(f)))
def test_every_algorithm_and_granularity_honour_the_filter(
    in_and_out: TestClient, filters: dict[str, Any]
) -> None:
    long_chunks = in_and_out.get("/api/v1/documents/file/long-in", headers=auth()).json()["chunks"]
    assert long_chunks > 2
    for algorithm, granularity, query in MODES:
        mode = (algorithm, granularity, query)
        result = search(
            in_and_out,
            groups=["eng"],
            query=query,
            algorithm=algorithm,
            granularity=granularity,
            limit=100,
            **filters,
        )
        found = ids(result)
        assert set(found) == {"long-in", "short-in"}, mode
        assert all(r["tags"] == ["keep"] for r in result["results"]), mode
        per_chunk = granularity == "chunk" and bool(query)
        assert found.count("long-in") == (long_chunks if per_chunk else 1), mode
        assert result["total_found"] == len(found), mode
