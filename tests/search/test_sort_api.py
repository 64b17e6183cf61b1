"""`sort`: relevance (a query's default), newest, oldest (browsing's default), on both search
paths, every algorithm and granularity: a date sort orders the whole result set under the
filters and the relevance floor before paging, so it changes the order and never the set."""

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import (
    DAY,
    LONG,
    MAY_4,
    MODES,
    assert_invalid,
    doc,
    post_search,
    search,
    shared_app,
    viz,
)

# Dates out of the order of relevance, two documents on one day (ties), a long document of
# several chunks, and documents that do not mention the query at all.
CORPUS = [
    doc("lantern-old", "A lantern in the garden at dusk.", modified_at=MAY_4 - 300 * DAY),
    doc("lantern-new", "The garden lantern was repaired.", modified_at=MAY_4),
    doc("twin-a", "Lantern light over the garden path.", modified_at=MAY_4 - 10 * DAY),
    doc("twin-b", "A garden lantern and a bench.", modified_at=MAY_4 - 10 * DAY),
    doc("long", LONG, modified_at=MAY_4 - 100 * DAY),
    doc("reactor", "Neutron flux in the reactor core.", modified_at=MAY_4 - 1 * DAY),
    doc("comet", "The comet orbit from telescope data.", modified_at=MAY_4 - 200 * DAY),
    doc("budget", "The quarterly budget of the team.", modified_at=MAY_4 - 50 * DAY),
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    yield from shared_app(tmp_path_factory, *CORPUS)


def _every_page(client: TestClient, via: str, **asked: Any) -> tuple[list[dict[str, Any]], int]:
    """Every result, page by page (3 a page), and the total of the first page."""
    results: list[dict[str, Any]] = []
    total = None
    while True:
        asked["offset"] = len(results)
        if via == "viz":
            status, found = viz(client, limit=3, **asked)
            assert status == 200, found
        else:
            found = search(client, limit=3, **asked)
        total = found["total_found"] if total is None else total
        results += found["results"]
        if len(found["results"]) < 3:
            return results, total


def _key(result: dict[str, Any]) -> tuple[str, str, int]:
    return (result["doc_type"], result["doc_id"], result["chunk_index"])


@pytest.mark.parametrize("via", ["api", "viz"])
@pytest.mark.parametrize(("algorithm", "granularity", "query"), MODES)
def test_a_date_sort_reorders_the_whole_set_before_paging(
    client: TestClient, via: str, algorithm: str, granularity: str, query: str
) -> None:
    mode = {"algorithm": algorithm, "granularity": granularity, "query": query}
    by_relevance, total = _every_page(client, via, sort="relevance", **mode)
    assert len(by_relevance) > 3  # several pages
    for order in ("newest", "oldest"):
        by_date, dated_total = _every_page(client, via, sort=order, **mode)
        assert sorted(map(_key, by_date)) == sorted(map(_key, by_relevance)), order
        assert len(set(map(_key, by_date))) == len(by_date)  # no page repeats another
        assert dated_total == total
        dates = [r["modified_at"] for r in by_date]
        assert dates == sorted(dates, reverse=order == "newest"), order
        if query:  # equal dates: the more relevant first, then by document id
            for first, second in itertools.pairwise(by_date):
                if first["modified_at"] == second["modified_at"]:
                    assert (-first["relevance"], first["doc_id"]) <= (
                        -second["relevance"],
                        second["doc_id"],
                    )


def test_each_sort_is_echoed_and_the_defaults_depend_on_the_query(client: TestClient) -> None:
    assert search(client, query="lantern")["sort"] == "relevance"
    assert search(client, query="")["sort"] == "newest"
    assert search(client, query="", sort="relevance")["sort"] == "newest"  # nothing to rank by
    assert search(client, query="lantern", sort="oldest")["sort"] == "oldest"
    newest = [r["doc_id"] for r in search(client, query="", limit=100)["results"]]
    oldest = [r["doc_id"] for r in search(client, query="", limit=100, sort="oldest")["results"]]
    assert (newest[0], oldest[0]) == ("lantern-new", "lantern-old")
    assert sorted(oldest) == sorted(newest)


def test_a_date_sort_keeps_to_the_relevance_floor(client: TestClient) -> None:
    floor: dict[str, Any] = {
        "query": "lantern garden",
        "algorithm": "bm25",
        "min_relevance": 0.65,
        "limit": 100,
    }
    strong = search(client, **floor)
    dated = search(client, sort="newest", **floor)
    assert sorted(map(_key, dated["results"])) == sorted(map(_key, strong["results"]))
    unfloored = search(client, **(floor | {"min_relevance": None}))
    assert 0 < dated["total_found"] == strong["total_found"] < unfloored["total_found"]
    assert all(r["relevance"] >= 0.65 for r in dated["results"])


@pytest.mark.parametrize("value", ["date", "NEWEST", "", 1, None])
def test_an_unknown_sort_is_refused_naming_the_field(client: TestClient, value: Any) -> None:
    if value is None:  # null is the default, accepted
        assert search(client, query="lantern", sort=None)["sort"] == "relevance"
        return
    assert_invalid(*post_search(client, query="lantern", sort=value), "sort")
    if isinstance(value, str):
        assert_invalid(*viz(client, query="lantern", sort=value), "sort")
