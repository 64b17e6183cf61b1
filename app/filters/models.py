"""The filter fields on the wire: what a request may narrow a search to, and the echo of the
filter as applied. `POST /api/v1/search` and `GET /viz/search` both parse into these."""

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictStr, ValidationInfo
from pydantic.json_schema import WithJsonSchema

from app.errors import InvalidRequest
from app.filters.spec import (
    MAX_FOLDERS,
    FilterSpec,
    check_date_range,
    clean_values,
    format_timestamp,
    normalize_path_prefixes,
    parse_modified_timestamp,
)
from app.unicode import ProperUnicode


def _to_seconds(value: Any, info: ValidationInfo) -> int | None:
    try:
        return parse_modified_timestamp(value, info.field_name or "date")
    except InvalidRequest as exc:
        raise ValueError(exc.message) from exc


DateBound = Annotated[
    int | None,
    BeforeValidator(_to_seconds),
    WithJsonSchema(
        {
            "anyOf": [{"type": "string"}, {"type": "number", "minimum": 0}, {"type": "null"}],
            "description": "RFC 3339 / ISO 8601 datetime (naive = UTC, date alone = midnight"
            " UTC) or Unix seconds (a number or a digit string; a fraction is truncated). null or"
            " blank = open.",
            "examples": ["2026-01-01T00:00:00Z", 1767225600],
        }
    ),
]
"""A date as requests send it, parsed to int seconds (None: no bound). The one date type of
every request model."""

StringList = list[StrictStr] | None


DATE_BOUND = (
    ' on the last-modified time: an RFC 3339 / ISO 8601 date or datetime ("2026-05-01" ='
    ' midnight UTC, "2026-05-01T09:30:00+02:00"; without an offset it is UTC) or Unix seconds'
    ' (1777593600). Omit, null or "" = no bound.'
)


class FilterFields(ProperUnicode):
    """The rich filters, shared by every search path, declared once: the HTTP bodies and query
    parameters parse into them and the MCP tools publish them (`FILTERS`, with these types and
    descriptions). Every one narrows; they combine with AND. Unknown fields are refused: a
    misspelt filter must never silently widen the results."""

    model_config = ConfigDict(extra="forbid")

    doc_types: StringList = Field(
        default=None,
        description='Keep documents of any of these types, e.g. ["file"] or ["note",'
        ' "deck_card"]. Types are lowercase identifiers: note, file, deck_card, news_item, ...'
        " (the facets show the ones that exist).",
        examples=[["file", "note"]],
    )
    modified_after: DateBound = Field(
        default=None, description="Inclusive lower bound" + DATE_BOUND
    )
    modified_before: DateBound = Field(
        default=None, description="Inclusive upper bound" + DATE_BOUND
    )
    path_prefixes: StringList = Field(
        default=None,
        description=f"Keep files inside any of these folders (up to {MAX_FOLDERS}). A folder is a"
        ' strict path prefix, segment by segment: "/Projects" matches /Projects/a.md and'
        " /Projects/x/b.md, never /Projects-old/c.md or /Archive/Projects/d.md. Absolute,"
        " case-sensitive, '/'-separated; a trailing '/' is ignored; \"/\" matches every file."
        " Documents without a file path (notes, cards, news) never match a folder.",
        examples=[["/Projects"]],
    )
    path_prefix: StrictStr | None = Field(
        default=None, description="Legacy single folder, folded into path_prefixes (first)."
    )
    tags: StringList = Field(
        default=None,
        description="Keep documents carrying at least one of these tags (exact, case-sensitive).",
        examples=[["urgent", "finance"]],
    )
    tags_all: StringList = Field(
        default=None, description="Keep documents carrying every one of these tags."
    )
    categories: StringList = Field(
        default=None,
        description='Keep documents in any of these categories (notes have one, e.g. "Work").',
    )
    owners: StringList = Field(
        default=None,
        description="Keep documents owned by any of these user ids. Never widens access: only"
        " documents the calling user may read are ever returned.",
    )

    def to_spec(self) -> FilterSpec:
        check_date_range(self.modified_after, self.modified_before)
        return FilterSpec(
            doc_types=clean_values(self.doc_types),
            modified_after=self.modified_after,
            modified_before=self.modified_before,
            path_prefixes=normalize_path_prefixes(self.path_prefix, self.path_prefixes),
            tags=clean_values(self.tags),
            tags_all=clean_values(self.tags_all),
            categories=clean_values(self.categories),
            owners=clean_values(self.owners),
        )


# The filters as the MCP tools publish them (the legacy `path_prefix` stays an HTTP field).
FILTERS = tuple(name for name in FilterFields.model_fields if name != "path_prefix")


class AppliedFilters(BaseModel):
    """The filter as applied: dates as RFC 3339 UTC with `Z`, folders normalized."""

    doc_types: list[str]
    modified_after: str | None
    modified_before: str | None
    path_prefixes: list[str]
    tags: list[str]
    tags_all: list[str]
    categories: list[str]
    owners: list[str]

    @classmethod
    def of(cls, spec: FilterSpec) -> "AppliedFilters":
        return cls(
            doc_types=list(spec.doc_types),
            modified_after=format_timestamp(spec.modified_after),
            modified_before=format_timestamp(spec.modified_before),
            path_prefixes=list(spec.path_prefixes),
            tags=list(spec.tags),
            tags_all=list(spec.tags_all),
            categories=list(spec.categories),
            owners=list(spec.owners),
        )


def _split(value: str | None, separator: str) -> list[str] | None:
    return None if value is None else value.split(separator)


CommaList = Annotated[str | None, Field(description="Comma-separated.")]
LineList = Annotated[
    str | None, Field(description="Newline-separated (a newline cannot occur in a path).")
]


class FilterParams(ProperUnicode):
    """The filters as query parameters (`GET /viz/search`, `GET /api/v1/folders`): lists are
    comma-separated (doc_types, categories) or newline-separated (folders, tags, owners)."""

    model_config = ConfigDict(extra="forbid")

    doc_types: CommaList = None
    categories: CommaList = None
    modified_after: DateBound = None
    modified_before: DateBound = None
    path_prefix: str | None = None
    path_prefixes: LineList = None
    tags: LineList = None
    tags_all: LineList = None
    owners: LineList = None

    def filters(self) -> FilterFields:
        return FilterFields(
            doc_types=_split(self.doc_types, ","),
            categories=_split(self.categories, ","),
            modified_after=self.modified_after,
            modified_before=self.modified_before,
            path_prefix=self.path_prefix,
            path_prefixes=_split(self.path_prefixes, "\n"),
            tags=_split(self.tags, "\n"),
            tags_all=_split(self.tags_all, "\n"),
            owners=_split(self.owners, "\n"),
        )
