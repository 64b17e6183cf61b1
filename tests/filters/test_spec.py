"""Table tests for the two parsers of the filter contract."""

from typing import Any

import pytest

from app.errors import InvalidRequest
from app.filters.spec import (
    check_date_range,
    folder_ancestors,
    format_timestamp,
    normalize_path_prefixes,
    parse_modified_timestamp,
)

MAY_4 = 1777888800  # 2026-05-04T10:00:00Z


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-05-04T10:00:00Z", MAY_4),
        ("2026-05-04T10:00:00+00:00", MAY_4),
        ("2026-05-04T12:00:00+02:00", MAY_4),
        ("2026-05-04T05:00:00-05:00", MAY_4),
        ("2026-05-04T10:00:00", MAY_4),  # naive = UTC
        ("2026-05-04T10:00:00.999Z", MAY_4),  # fraction truncated
        ("2026-05-04", MAY_4 - 10 * 3600),  # date alone = midnight UTC
        ("  2026-05-04T10:00:00Z  ", MAY_4),
        (MAY_4, MAY_4),
        (float(MAY_4) + 0.9, MAY_4),  # fraction truncated
        (str(MAY_4), MAY_4),  # digit string
        (f"{MAY_4}.75", MAY_4),
        (0, 0),
        (None, None),
        ("", None),
        ("   ", None),
    ],
)
def test_parse_modified_timestamp_accepts(value: Any, expected: int | None) -> None:
    assert parse_modified_timestamp(value, "modified_after") == expected


@pytest.mark.parametrize(
    "value",
    [
        "yesterday",
        "2026-13-01",  # month 13
        "2026-02-30",
        "2026-05-04T25:00:00Z",
        "2026-05-04T10:61:00Z",
        "-5",
        -5,
        -0.5,
        True,
        False,
        [MAY_4],
        {"at": MAY_4},
        float("nan"),
        float("inf"),
        10**15,  # beyond year 9999
    ],
)
def test_parse_modified_timestamp_rejects_naming_the_field(value: Any) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_modified_timestamp(value, "modified_before")
    assert caught.value.field == "modified_before"
    assert "modified_before" in caught.value.message


def test_inverted_range_is_rejected_and_equal_bounds_are_not() -> None:
    check_date_range(MAY_4, MAY_4)
    check_date_range(None, MAY_4)
    with pytest.raises(InvalidRequest) as caught:
        check_date_range(MAY_4 + 1, MAY_4)
    assert caught.value.field == "modified_after"


def test_format_timestamp_is_rfc3339_utc_with_z() -> None:
    assert format_timestamp(MAY_4) == "2026-05-04T10:00:00Z"
    assert format_timestamp(None) is None


@pytest.mark.parametrize(
    ("path_prefix", "path_prefixes", "expected"),
    [
        (None, ["/Projects"], ("/Projects",)),
        (None, ["Projects"], ("/Projects",)),  # leading slash added
        (None, ["/Projects/"], ("/Projects",)),  # trailing slash removed
        (None, ["  /Projects/Reports  "], ("/Projects/Reports",)),  # trimmed
        (None, ["/", "//"], ("/",)),  # root stays root
        (None, ["", "   ", "/A"], ("/A",)),  # blanks dropped
        (None, ["/A", "A/", "/A/", "/B"], ("/A", "/B")),  # duplicates after normalization
        ("/Legacy", ["/B", "/A"], ("/Legacy", "/B", "/A")),  # legacy first, order kept
        ("/A", ["/A"], ("/A",)),
        ("", None, ()),
        (None, None, ()),
        (None, ["/a//b///"], ("/a/b",)),
        (None, ["/Projects"], ("/Projects",)),
    ],
)
def test_normalize_path_prefixes(
    path_prefix: str | None, path_prefixes: list[str] | None, expected: tuple[str, ...]
) -> None:
    assert normalize_path_prefixes(path_prefix, path_prefixes) == expected


def test_normalize_path_prefixes_counts_after_normalization() -> None:
    twenty = [f"/f{i}" for i in range(20)]
    assert len(normalize_path_prefixes(None, [*twenty, "/f0/", "f1", " "])) == 20
    with pytest.raises(InvalidRequest) as caught:
        normalize_path_prefixes("/extra", twenty)
    assert caught.value.field == "path_prefixes"


def test_normalize_path_prefixes_is_case_sensitive() -> None:
    assert normalize_path_prefixes(None, ["/projects", "/Projects"]) == ("/projects", "/Projects")


def test_folder_ancestors_are_whole_segments() -> None:
    assert folder_ancestors("/Projects/x/b.md") == [
        "/",
        "/Projects",
        "/Projects/x",
        "/Projects/x/b.md",
    ]
