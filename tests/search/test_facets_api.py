"""Facets: visible matching documents per chip, each under all the other filters."""

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.helpers import (
    ALGORITHMS,
    LONG,
    MAY_4,
    doc,
    facets,
    search,
    shared_app,
)

# --- facets ------------------------------------------------------------------------------------

FACET_DOCS = [
    doc("n1", tags=["red"], category="Work"),
    doc("n2", tags=["red", "blue"], category="Home"),
    doc("f1", doc_type="file", file_path="/Projects/a.md", tags=["blue"]),
    doc("f2", doc_type="file", file_path="/Archive/b.md", tags=["red"]),
    doc("f3", LONG, doc_type="file", file_path="/Projects/deep/long.md", tags=["red"]),
    doc(
        "card",
        doc_type="deck_card",
        owner="bob",
        acl=["user:alice"],
        tags=["green"],
        category="Work",
    ),
    # Never visible to alice (without group eng):
    doc("secret-note", owner="bob", tags=["red"], category="Work"),
    doc("secret-file", LONG, doc_type="file", owner="bob", file_path="/Secret/x.md", tags=["red"]),
    doc("team-file", doc_type="file", owner="carol", acl=["group:eng"], file_path="/Team/t.md"),
]
ALL_DOC_TYPES = {"note": 2, "file": 3, "deck_card": 1}
ALL_TAGS = {"red": 4, "blue": 2, "green": 1}


@pytest.fixture(scope="module")
def faceted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    yield from shared_app(tmp_path_factory, *FACET_DOCS)


def test_facets_count_each_visible_document_once(faceted: TestClient) -> None:
    expected = {
        "doc_type": ALL_DOC_TYPES,
        "tags": ALL_TAGS,
        "category": {"Work": 2, "Home": 1},
        "owner": {"alice": 5, "bob": 1},
        "folders": {"/Projects": 2, "/Archive": 1},
    }
    for algorithm in ALGORITHMS:
        assert facets(faceted, query="lantern garden", algorithm=algorithm) == expected
    assert facets(faceted, query="") == expected
    member = facets(faceted, groups=["eng"], query="")
    assert member["owner"] == {"alice": 5, "bob": 1, "carol": 1}
    assert member["folders"] == {"/Projects": 2, "/Archive": 1, "/Team": 1}


def test_facets_are_absent_unless_asked_for(faceted: TestClient) -> None:
    assert "facets" not in search(faceted, query="")


def test_each_facet_counts_under_all_the_other_filters(faceted: TestClient) -> None:
    files = facets(faceted, query="", doc_types=["file"])
    assert files == {
        "doc_type": ALL_DOC_TYPES,  # its own filter is left out
        "tags": {"red": 2, "blue": 1},
        "category": {},
        "owner": {"alice": 3},
        "folders": {"/Projects": 2, "/Archive": 1},
    }
    red = facets(faceted, query="", tags=["red"])
    assert red == {
        "doc_type": {"note": 2, "file": 2},
        "tags": ALL_TAGS,
        "category": {"Work": 1, "Home": 1},
        "owner": {"alice": 4},
        "folders": {"/Projects": 1, "/Archive": 1},
    }
    both = facets(faceted, query="", tags_all=["red", "blue"])
    assert both["tags"] == ALL_TAGS and both["doc_type"] == {"note": 1}
    projects = facets(faceted, query="", path_prefixes=["/Projects"])
    assert projects["folders"] == {"/Projects": 2, "/Archive": 1}
    assert projects["doc_type"] == {"file": 2} and projects["tags"] == {"red": 1, "blue": 1}
    work = facets(faceted, query="", categories=["Work"], owners=["bob"])
    assert work["category"] == {"Work": 1}  # only the visible card is bob's
    assert work["owner"] == {"alice": 1, "bob": 1}
    assert work["doc_type"] == {"deck_card": 1}
    recent = facets(faceted, query="", modified_after=MAY_4 + 1)
    assert all(counts == {} for counts in recent.values())
