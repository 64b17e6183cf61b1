"""`GET /viz/search`: the same search and filters as query parameters, plus the PCA map."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import (
    ALGORITHMS,
    MAY_4,
    assert_invalid,
    auth,
    doc,
    ids,
    search,
    shared_app,
    viz,
)

# --- GET /viz/search ---------------------------------------------------------------------------

VIZ_DOCS = [
    doc("a", "apple lantern", doc_type="file", file_path="/Projects/a.md", tags=["red"]),
    doc("b", "apple river", doc_type="file", file_path="/Projects/x/b.md", tags=["blue"]),
    doc("c", "apple engine", doc_type="file", file_path="/Archive/c.md", tags=["red"]),
    doc("d", "apple violin", doc_type="file", file_path="/Projects-old/d.md", tags=["red"]),
    doc("e", "apple garden", doc_type="deck_card", tags=["red"]),
    doc("n", "apple copper", tags=["red"]),
    doc("hidden", "apple copper", owner="bob", tags=["red"]),
]


@pytest.fixture(scope="module")
def vizzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    yield from shared_app(tmp_path_factory, *VIZ_DOCS)


def test_viz_splits_lists_and_filters_like_search(vizzed: TestClient) -> None:
    cases: list[tuple[dict[str, Any], dict[str, Any], list[str]]] = [
        (
            {
                "doc_types": "file,deck_card",
                "path_prefixes": "/Projects\n/Archive",
                "tags": "red\nblue",
            },
            {
                "doc_types": ["file", "deck_card"],
                "path_prefixes": ["/Projects", "/Archive"],
                "tags": ["red", "blue"],
            },
            ["a", "b", "c"],
        ),
        (
            {"doc_types": "note,deck_card", "tags": "red"},
            {"doc_types": ["note", "deck_card"], "tags": ["red"]},
            ["e", "n"],
        ),
        (
            {"path_prefix": "Projects-old/", "modified_after": "2026-05-04T12:00:00+02:00"},
            {"path_prefixes": ["/Projects-old"], "modified_after": MAY_4},
            ["d"],
        ),
    ]
    for params, body, expected in cases:
        for algorithm, query in [*((a, "apple") for a in ALGORITHMS), ("hybrid", "")]:
            status, result = viz(vizzed, query=query, algorithm=algorithm, **params)
            assert status == 200, result
            assert sorted(ids(result)) == expected, (params, algorithm)
            posted = search(vizzed, query=query, algorithm=algorithm, limit=20, **body)
            assert sorted(ids(result)) == sorted(ids(posted)), (params, algorithm)
            assert result["filters"] == posted["filters"]
            assert result["total_found"] == len(expected)


def test_pages_neither_repeat_nor_skip_a_result_when_scores_tie(vizzed: TestClient) -> None:
    """Fused scores tie often (ranks 1 + 2 against 2 + 1): the order of tied results must not
    change from one request to the next, or offset paging repeats one result and loses another."""
    body: dict[str, Any] = {
        "query": "apple",
        "doc_types": ["file", "deck_card"],
        "path_prefixes": ["/Projects", "/Archive"],
        "tags": ["red", "blue"],
    }
    modes: list[dict[str, Any]] = [{"algorithm": a} for a in ALGORITHMS] + [{"fusion": "dbsf"}]
    for mode in modes:
        for attempt in range(15):
            pages = [ids(search(vizzed, limit=1, offset=o, **mode, **body)) for o in range(3)]
            found = [doc_id for page in pages for doc_id in page]
            assert sorted(found) == ["a", "b", "c"], (mode, attempt, pages)


def test_viz_returns_one_point_per_result(vizzed: TestClient) -> None:
    for tags, expected in [("red\nblue", 6), ("nothing", 0), ("blue", 1)]:
        status, result = viz(vizzed, query="apple", tags=tags)
        assert status == 200 and len(result["results"]) == expected, tags
        assert len(result["coordinates_2d"]) == expected, tags
        assert len(result["coordinates_3d"]) == expected, tags
        assert all(len(point) == 2 for point in result["coordinates_2d"])
        assert all(len(point) == 3 for point in result["coordinates_3d"])


@pytest.mark.parametrize("field", ["modified_after", "modified_before"])
def test_viz_bad_date_is_400_with_the_error_envelope(vizzed: TestClient, field: str) -> None:
    bad: dict[str, Any] = {field: "2026-13-01"}
    status, body = viz(vizzed, query="apple", **bad)
    assert status == 400
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "field"}
    assert body["error"]["code"] == "invalid_request"
    assert body["error"]["field"] == field
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def test_viz_inverted_range_and_too_many_folders_are_400(vizzed: TestClient) -> None:
    status, body = viz(vizzed, modified_after=MAY_4 + 1, modified_before=MAY_4)
    assert status == 400 and body["error"]["field"] in ("modified_after", "modified_before")
    many = "\n".join(f"/f{i}" for i in range(21))
    assert_invalid(*viz(vizzed, path_prefixes=many), "path_prefixes")


def test_viz_limit_is_1_to_50(vizzed: TestClient) -> None:
    assert_invalid(*viz(vizzed, query="apple", limit=51), "limit")
    assert_invalid(*viz(vizzed, query="apple", limit=0), "limit")
    status, body = viz(vizzed, query="apple", limit=50)
    assert status == 200 and len(body["results"]) == 6


def test_viz_search_needs_a_token(vizzed: TestClient) -> None:
    response = vizzed.get("/viz/search", params={"query": "apple"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"


def test_viz_takes_the_whole_filter_contract_like_search(vizzed: TestClient) -> None:
    """offset, score_threshold, include_facets, categories (comma), owners and tags_all
    (newline): the same results, total, filters and facets as the POST body."""
    params: dict[str, Any] = {
        "query": "apple",
        "algorithm": "bm25",
        "limit": 2,
        "offset": 1,
        "score_threshold": 0.01,
        "include_facets": "true",
        "categories": "Work, ,Home",
        "owners": "alice\n",
        "tags_all": "red",
    }
    body: dict[str, Any] = {
        "query": "apple",
        "algorithm": "bm25",
        "limit": 2,
        "offset": 1,
        "score_threshold": 0.01,
        "include_facets": True,
        "categories": ["Work", " ", "Home"],
        "owners": ["alice", ""],
        "tags_all": ["red"],
    }
    status, result = viz(vizzed, **params)
    assert status == 200, result
    posted = search(vizzed, **body)
    for key in ("results", "total_found", "filters", "facets"):
        assert result[key] == posted[key], key
    assert result["filters"]["categories"] == ["Work", "Home"]
    assert result["filters"]["owners"] == ["alice"]


def test_viz_categories_filter_and_facets(vizzed: TestClient) -> None:
    status, result = viz(vizzed, query="", categories="none-such")
    assert (status, result["results"], result["total_found"]) == (200, [], 0)
    status, result = viz(vizzed, query="", include_facets="true")
    assert result["facets"]["doc_type"] == {"file": 4, "deck_card": 1, "note": 1}
    assert "facets" not in viz(vizzed, query="")[1]


def test_viz_unknown_parameter_is_400_naming_it(vizzed: TestClient) -> None:
    status, result = viz(vizzed, query="apple", doc_type="file")
    assert_invalid(status, result, "doc_type")
    assert "unknown" in result["error"]["message"]


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/viz/search", (("query", "apple"), ("tags", "red"), ("tags", "blue"))),
        ("/viz/search", (("modified_before", "2026-01-01"), ("modified_before", "2027-01-01"))),
        ("/api/v1/folders", (("parent", "/"), ("parent", "/Projects"))),
    ],
)
def test_a_parameter_given_twice_is_400_naming_it(
    vizzed: TestClient, path: str, params: tuple[tuple[str, str], ...]
) -> None:
    """The last would silently win: `tags=red&tags=blue` would filter on blue alone."""
    response = vizzed.get(path, params=params, headers=auth())
    assert_invalid(response.status_code, response.json(), params[-1][0])
    assert "more than once" in response.json()["error"]["message"]


def test_a_parameter_given_twice_without_a_token_is_401(vizzed: TestClient) -> None:
    response = vizzed.get("/viz/search", params=(("tags", "a"), ("tags", "b")))
    assert response.status_code == 401
