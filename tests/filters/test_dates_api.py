"""Date bounds through the HTTP API on the real embedded engine: inclusive, on every algorithm,
blank = open, invalid or inverted = 400, echoed in UTC with Z."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import (
    ALGORITHMS,
    MAY_4,
    auth,
    browse,
    doc,
    ids,
    index,
    post_search,
    search,
    shared_app,
)

# --- dates -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """Three documents a second apart around 2026-05-04T10:00:00Z."""
    yield from shared_app(
        tmp_path_factory,
        doc("before", "lantern", modified_at=MAY_4 - 1),
        doc("at", "lantern", modified_at="2026-05-04T10:00:00Z"),
        doc("after", "lantern", modified_at=MAY_4 + 1),
    )


@pytest.mark.parametrize(
    "bound",
    [
        "2026-05-04T10:00:00Z",
        "2026-05-04T12:00:00+02:00",
        "2026-05-04T05:00:00-05:00",
        "2026-05-04T10:00:00",  # naive = UTC
        MAY_4,
        str(MAY_4),  # a digit string
        f"{MAY_4}.999",  # fraction truncated, not rounded
        MAY_4 + 0.5,
    ],
)
def test_a_bound_equal_to_modified_at_includes_the_document(
    dated: TestClient, bound: str | int | float
) -> None:
    assert browse(dated, modified_after=bound) == ["after", "at"]
    assert browse(dated, modified_before=bound) == ["at", "before"]
    assert browse(dated, modified_after=bound, modified_before=bound) == ["at"]


def test_one_second_past_the_bound_excludes_the_document(dated: TestClient) -> None:
    assert browse(dated, modified_after="2026-05-04T10:00:01Z") == ["after"]
    assert browse(dated, modified_after=str(MAY_4 + 1)) == ["after"]
    assert browse(dated, modified_before=MAY_4 - 1) == ["before"]
    assert browse(dated, modified_before="2026-05-04T11:59:59+02:00") == ["before"]
    assert browse(dated, modified_after=MAY_4 + 2) == []


def test_ranked_algorithms_apply_the_date_bounds_too(dated: TestClient) -> None:
    for algorithm in ALGORITHMS:
        for granularity in ("chunk", "document"):
            mode = (algorithm, granularity)
            ranked: dict[str, Any] = {
                "query": "lantern",
                "algorithm": algorithm,
                "granularity": granularity,
                "limit": 100,
            }
            after = search(dated, modified_after=MAY_4, **ranked)
            assert sorted(ids(after)) == ["after", "at"], mode
            before = search(dated, modified_before="2026-05-04T12:00:00+02:00", **ranked)
            assert sorted(ids(before)) == ["at", "before"], mode


def test_an_inverted_range_is_400_naming_a_bound(dated: TestClient) -> None:
    status, body = post_search(
        dated, modified_after="2026-05-04T10:00:01Z", modified_before="2026-05-04T10:00:00Z"
    )
    assert status == 400
    assert body["error"]["code"] == "invalid_request"
    assert body["error"]["field"] in ("modified_after", "modified_before")


@pytest.mark.parametrize("blank", [None, "", "   "])
def test_null_and_blank_bounds_mean_no_bound(dated: TestClient, blank: str | None) -> None:
    result = search(dated, query="", modified_after=blank, modified_before=blank)
    assert sorted(ids(result)) == ["after", "at", "before"]
    assert (result["filters"]["modified_after"], result["filters"]["modified_before"]) == (
        None,
        None,
    )


INVALID_BOUNDS: list[object] = [
    "2026-13-01",
    "2026-02-30",
    "2026-05-04T25:00:00Z",
    "yesterday",
    -5,
    "-5",
    -0.5,
    True,
    False,
    [1],
    {"a": 1},
    10**15,  # after year 9999
]


@pytest.mark.parametrize("field", ["modified_after", "modified_before"])
def test_an_invalid_bound_is_400_naming_the_field(dated: TestClient, field: str) -> None:
    for value in INVALID_BOUNDS:
        bound: dict[str, Any] = {field: value}
        status, body = post_search(dated, **bound)
        assert (status, body["error"]["field"]) == (400, field), value
        assert body["error"]["code"] == "invalid_request"


@pytest.mark.parametrize(
    "value",
    [
        "0001-01-01T00:00:00+01:00",  # before year 1 in UTC
        "9999-12-31T23:59:59-01:00",  # year 10000 in UTC
    ],
)
def test_a_date_outside_the_printable_range_is_400_not_500(dated: TestClient, value: str) -> None:
    """The echo prints every bound as RFC 3339 UTC: a bound that has none must be refused."""
    lenient = TestClient(dated.app, raise_server_exceptions=False)
    response = lenient.post("/api/v1/search", json={"modified_after": value}, headers=auth())
    assert response.status_code == 400, response.text
    assert response.json()["error"]["field"] == "modified_after"


# --- the filters echo --------------------------------------------------------------------------


def test_filters_echo_dates_in_utc_with_z_and_folders_normalized(client: TestClient) -> None:
    index(client, doc("x", modified_at="2026-05-04T12:00:00+02:00"))
    result = search(
        client,
        query="",
        modified_after="2026-05-04T12:00:00+02:00",
        modified_before=MAY_4 + 3600,
        path_prefix=" Legacy/ ",
        path_prefixes=["Projects/", "/Archive", "  ", "/Projects"],
    )
    echo = result["filters"]
    assert echo["modified_after"] == "2026-05-04T10:00:00Z"
    assert echo["modified_before"] == "2026-05-04T11:00:00Z"
    assert echo["path_prefixes"] == ["/Legacy", "/Projects", "/Archive"]
    assert (echo["doc_types"], echo["tags"], echo["tags_all"]) == ([], [], [])
    assert (echo["categories"], echo["owners"]) == ([], [])
    day_only = search(client, query="", modified_after="2026-05-04", modified_before=str(MAY_4))
    assert day_only["filters"]["modified_after"] == "2026-05-04T00:00:00Z"
    assert day_only["filters"]["modified_before"] == "2026-05-04T10:00:00Z"
    assert [r["modified_at"] for r in day_only["results"]] == ["2026-05-04T10:00:00Z"]
