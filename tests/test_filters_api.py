"""The rich filters through the HTTP API (`POST /api/v1/search`, `GET /viz/search`) on the real
embedded engine with the hashing embedder: dates, folders, tags, categories, owners, doc types,
every algorithm and granularity, browse, the filter echo, facets, and a selective filter that
must still fill the page."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.embeddings.dense import HashingEncoder
from tests.helpers import auth, doc, ids, index, running_app, search

MAY_4 = 1_777_888_800  # 2026-05-04T10:00:00Z
DAY = 86_400
LONG = " ".join(f"Sentence {i} is about the lantern in the garden." for i in range(70))
ALGORITHMS = ("hybrid", "semantic", "bm25")
# (algorithm, granularity, query): every ranked mode, and browse (empty query).
MODES = [(a, g, "lantern garden") for a in ALGORITHMS for g in ("chunk", "document")] + [
    ("hybrid", "chunk", ""),
    ("hybrid", "document", ""),
]


def post_search(
    client: TestClient, user: str = "alice", groups: list[str] | None = None, **body: Any
) -> tuple[int, dict[str, Any]]:
    response = client.post("/api/v1/search", json=body, headers=auth(user, groups))
    payload: dict[str, Any] = response.json()
    return response.status_code, payload


def viz(
    client: TestClient, user: str = "alice", groups: list[str] | None = None, **params: Any
) -> tuple[int, dict[str, Any]]:
    response = client.get("/viz/search", params=params, headers=auth(user, groups))
    payload: dict[str, Any] = response.json()
    return response.status_code, payload


def browse(client: TestClient, user: str = "alice", **filters: Any) -> list[str]:
    """Sorted ids of every matching document (browse mode)."""
    return sorted(ids(search(client, user=user, query="", limit=100, **filters)))


def shared_app(
    tmp_path_factory: pytest.TempPathFactory, *documents: dict[str, Any]
) -> Iterator[TestClient]:
    """One app with a fixed corpus for a module's read-only tests (starting one costs I/O)."""
    with running_app(tmp_path_factory.mktemp("shared"), HashingEncoder()) as shared:
        index(shared, *documents)
        yield shared


def assert_invalid(status: int, body: dict[str, Any], field: str) -> None:
    assert status == 400, body
    assert body["error"]["code"] == "invalid_request"
    assert body["error"]["field"] == field
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


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


# --- folders -----------------------------------------------------------------------------------

FOLDER_DOCS = [
    doc("a", doc_type="file", file_path="/Projects/a.md"),
    doc("b", doc_type="file", file_path="/Projects/x/b.md"),
    doc("exact", doc_type="file", file_path="/Projects"),
    doc("old", doc_type="file", file_path="/Projects-old/c.md"),
    doc("archived", doc_type="file", file_path="/Archive/Projects/d.md"),
    doc("plain-note"),
    doc("note-with-path", file_path="/Projects/n.md"),
]
ALL_FILES = ["a", "archived", "b", "exact", "old"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    yield from shared_app(tmp_path_factory, *FOLDER_DOCS)


@pytest.mark.parametrize("folder", ["/Projects", "Projects", "/Projects/", " /Projects/ "])
def test_a_folder_matches_itself_and_what_lies_below_segment_by_segment(
    folders: TestClient, folder: str
) -> None:
    result = search(folders, query="", limit=100, path_prefixes=[folder])
    assert sorted(ids(result)) == ["a", "b", "exact"]
    assert result["filters"]["path_prefixes"] == ["/Projects"]
    assert result["total_found"] == 3


def test_root_matches_every_file_and_never_a_note(folders: TestClient) -> None:
    result = search(folders, query="", limit=100, path_prefixes=["/"])
    assert sorted(ids(result)) == ALL_FILES
    assert result["filters"]["path_prefixes"] == ["/"]


def test_sub_folders_and_file_paths_match_whole_segments_only(folders: TestClient) -> None:
    assert browse(folders, path_prefixes=["/Projects/x"]) == ["b"]
    assert browse(folders, path_prefixes=["/Projects/a.md"]) == ["a"]
    assert browse(folders, path_prefixes=["/Projects/x/b"]) == []
    assert browse(folders, path_prefixes=["/Proj"]) == []


def test_folders_are_case_sensitive(folders: TestClient) -> None:
    result = search(folders, query="", path_prefixes=["/projects"])
    assert result["results"] == [] and result["total_found"] == 0


def test_several_folders_are_any_of(folders: TestClient) -> None:
    assert browse(folders, path_prefixes=["/Projects-old", "/Archive"]) == ["archived", "old"]


def test_the_legacy_path_prefix_is_folded_in_first(folders: TestClient) -> None:
    result = search(
        folders, query="", path_prefix="Archive/", path_prefixes=["/Projects-old", "/Archive"]
    )
    assert result["filters"]["path_prefixes"] == ["/Archive", "/Projects-old"]
    assert sorted(ids(result)) == ["archived", "old"]
    alone = search(folders, query="", path_prefix="/Projects-old")
    assert alone["filters"]["path_prefixes"] == ["/Projects-old"]
    assert ids(alone) == ["old"]


def test_every_algorithm_leaves_notes_out_of_a_folder_filter(folders: TestClient) -> None:
    for algorithm in ALGORITHMS:
        result = search(
            folders, query="plain text document", algorithm=algorithm, path_prefixes=["/Projects"]
        )
        assert sorted(ids(result)) == ["a", "b", "exact"], algorithm


def test_at_most_20_distinct_folders(folders: TestClient) -> None:
    twenty = [f"/f{i}" for i in range(20)]
    assert_invalid(*post_search(folders, path_prefixes=[*twenty, "/f20"]), "path_prefixes")
    assert_invalid(
        *post_search(folders, path_prefix="/extra", path_prefixes=twenty), "path_prefixes"
    )
    status, body = post_search(folders, path_prefixes=[*twenty, "/f0/", "f1", " f2 ", "   ", ""])
    assert status == 200, body
    assert body["filters"]["path_prefixes"] == twenty


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


# --- browse ------------------------------------------------------------------------------------


def test_browse_is_newest_first_and_pages_with_limit_and_offset(client: TestClient) -> None:
    index(
        client,
        *(
            doc(f"d{i}", LONG if i % 4 == 0 else "", modified_at=MAY_4 + 60 * i)
            | {"tags": [] if i % 3 == 0 else ["keep"]}
            for i in range(12)
        ),
    )
    newest_first = ["d11", "d10", "d8", "d7", "d5", "d4", "d2", "d1"]
    pages = [search(client, query="", tags=["keep"], limit=3, offset=o) for o in (0, 3, 6, 9)]
    assert [ids(page) for page in pages] == [
        newest_first[:3],
        newest_first[3:6],
        newest_first[6:],
        [],
    ]
    assert [page["total_found"] for page in pages] == [8, 8, 8, 8]
    dates = [r["modified_at"] for page in pages for r in page["results"]]
    assert dates == sorted(dates, reverse=True)


def test_browse_total_found_is_the_exact_number_of_matching_documents(
    client: TestClient,
) -> None:
    matching = [doc(f"m{i}", LONG if i % 10 == 0 else "", tags=["keep"]) for i in range(130)]
    others = [doc(f"o{i}", LONG if i % 5 == 0 else "") for i in range(40)]
    index(client, *matching[:100])
    index(client, *matching[100:], *others)
    for granularity in ("chunk", "document"):
        result = search(client, query="", limit=5, tags=["keep"], granularity=granularity)
        assert len(result["results"]) == 5
        assert result["total_found"] == 130, granularity
    assert search(client, query="", limit=5)["total_found"] == 170


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


def test_filters_echo_lists_as_applied(folders: TestClient) -> None:
    result = search(
        folders,
        query="",
        doc_types=["file", "note"],
        tags=["red"],
        tags_all=["blue", "green"],
        categories=["Work"],
        owners=["bob"],
    )
    echo = result["filters"]
    assert echo["doc_types"] == ["file", "note"]
    assert (echo["tags"], echo["tags_all"]) == (["red"], ["blue", "green"])
    assert (echo["categories"], echo["owners"]) == (["Work"], ["bob"])
    assert (echo["modified_after"], echo["modified_before"], echo["path_prefixes"]) == (
        None,
        None,
        [],
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


def facets(client: TestClient, groups: list[str] | None = None, **body: Any) -> dict[str, Any]:
    result = search(client, groups=groups, include_facets=True, **body)
    value: dict[str, Any] = result["facets"]
    return value


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


def test_a_folder_chip_counts_what_choosing_it_gives(folders: TestClient) -> None:
    """API.md: each facet counts under the other filters, "so a chip shows what choosing it
    would give" -- also for a file whose path is exactly a top-level folder (`/Projects`)."""
    chips = facets(folders, query="")["folders"]
    for folder, count in chips.items():
        chosen = search(folders, query="", path_prefixes=[folder])["total_found"]
        assert count == chosen, (folder, chips)
    assert chips.get("/Projects") == 3


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


# --- a selective filter still fills the page ---------------------------------------------------


def test_a_selective_filter_still_fills_the_page(client: TestClient) -> None:
    common = [
        doc(f"c{i}", f"Apple orchard harvest. Apple orchard harvest report {i}.", title="Apples")
        for i in range(147)
    ]
    rare = [
        doc(f"r{i}", f"Violin concerto rehearsal {i}; someone brought an apple.", tags=["rare"])
        for i in range(3)
    ]
    index(client, *common, *rare)
    query = "apple orchard harvest"
    expected = ["r0", "r1", "r2"]
    for algorithm in ALGORITHMS:
        unfiltered = ids(search(client, query=query, algorithm=algorithm, limit=100))
        assert not set(unfiltered) & set(expected), algorithm  # ranked far below a full page
        for granularity in ("chunk", "document"):
            result = search(
                client,
                query=query,
                algorithm=algorithm,
                granularity=granularity,
                tags=["rare"],
                limit=10,
            )
            assert sorted(ids(result)) == expected, (algorithm, granularity)
            assert result["total_found"] == 3
            top = search(
                client,
                query=query,
                algorithm=algorithm,
                granularity=granularity,
                tags=["rare"],
                limit=2,
            )
            assert len(top["results"]) == 2 and top["total_found"] >= 2
    assert browse(client, tags=["rare"]) == expected
    status, body = viz(client, query=query, algorithm="bm25", tags="rare")
    assert status == 200 and sorted(ids(body)) == expected
