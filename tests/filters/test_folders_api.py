"""Folder filters through the HTTP API: left-anchored, segment by segment, case-sensitive, at most
20, echoed normalized; a folder chip counts what choosing it gives."""

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.helpers import (
    ALGORITHMS,
    assert_invalid,
    browse,
    doc,
    facets,
    ids,
    post_search,
    search,
    shared_app,
)

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


def test_a_folder_chip_counts_what_choosing_it_gives(folders: TestClient) -> None:
    """docs/api.md: each facet counts under the other filters, "so a chip shows what choosing it
    would give" -- also for a file whose path is exactly a top-level folder (`/Projects`)."""
    chips = facets(folders, query="")["folders"]
    for folder, count in chips.items():
        chosen = search(folders, query="", path_prefixes=[folder])["total_found"]
        assert count == chosen, (folder, chips)
    assert chips.get("/Projects") == 3
