"""The one filter spec every search path speaks, and the parsers that build it."""

import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime

from app.errors import InvalidRequest

MAX_FOLDERS = 20
# Year 9999 keeps every bound printable as RFC 3339 and inside the engine's i64 index.
MAX_TIMESTAMP = 253_402_300_799
_UNIX_SECONDS = re.compile(r"\d+(\.\d*)?")
_SLASHES = re.compile(r"/{2,}")


@dataclass(frozen=True)
class FilterSpec:
    """What a user narrowed the search to; every list is an OR, the fields are AND-ed."""

    doc_types: tuple[str, ...] = ()
    modified_after: int | None = None
    modified_before: int | None = None
    path_prefixes: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    tags_all: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()


def parse_modified_timestamp(value: object, field: str) -> int | None:
    """RFC 3339 / ISO 8601 text or Unix seconds -> int seconds; None, "" and blanks -> no bound."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidRequest(f"{field} must be a date or Unix seconds, not a boolean", field)
    if isinstance(value, int | float):
        return _from_seconds(value, field)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if _UNIX_SECONDS.fullmatch(text):
            return _from_digits(text, field)
        return _from_iso(text, field)
    raise InvalidRequest(f"{field} must be a date string or Unix seconds", field)


def _from_digits(text: str, field: str) -> int:
    """A string of digits, its fraction truncated; the length is checked before converting (a
    5,000-digit string would pass Python's int limit only to fail in it)."""
    whole = text.partition(".")[0].lstrip("0") or "0"
    if len(whole) > len(str(MAX_TIMESTAMP)):
        raise InvalidRequest(f"{field} is out of range (after year 9999)", field)
    return _from_seconds(int(whole), field)


def _from_seconds(value: int | float, field: str) -> int:
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidRequest(f"{field} must be a finite number of seconds", field)
    if value < 0:
        raise InvalidRequest(f"{field} must not be negative", field)
    seconds = int(value)
    if seconds > MAX_TIMESTAMP:
        raise InvalidRequest(f"{field} is out of range (after year 9999)", field)
    return seconds


def _from_iso(text: str, field: str) -> int:
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidRequest(
            f"{field} is not an RFC 3339 / ISO 8601 date or Unix seconds: {text!r}", field
        ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = int(moment.timestamp())
    if not 0 <= seconds <= MAX_TIMESTAMP:
        raise InvalidRequest(f"{field} is out of range (1970 to 9999 UTC): {text!r}", field)
    return seconds


def check_date_range(after: int | None, before: int | None) -> None:
    if after is not None and before is not None and after > before:
        raise InvalidRequest("modified_after is later than modified_before", "modified_after")


def format_timestamp(seconds: int | None) -> str | None:
    """Int seconds -> RFC 3339 UTC ending in `Z`."""
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def normalize_folder(raw: str) -> str | None:
    """Trim, collapse repeated slashes, add the leading `/`, drop a trailing one; blank -> None."""
    text = raw.strip()
    if not text:
        return None
    path = _SLASHES.sub("/", "/" + text)
    return path.rstrip("/") or "/"


def normalize_path_prefixes(
    path_prefix: str | None, path_prefixes: list[str] | tuple[str, ...] | None
) -> tuple[str, ...]:
    """Legacy single folder first, then the list; normalized, de-duplicated, order kept."""
    raw = ([path_prefix] if path_prefix is not None else []) + list(path_prefixes or ())
    folders: list[str] = []
    for entry in raw:
        folder = normalize_folder(entry)
        if folder is not None and folder not in folders:
            folders.append(folder)
    if len(folders) > MAX_FOLDERS:
        raise InvalidRequest(
            f"at most {MAX_FOLDERS} folders may be given, got {len(folders)}", "path_prefixes"
        )
    return tuple(folders)


def folder_ancestors(file_path: str) -> list[str]:
    """`/a/b/c.md` -> `["/", "/a", "/a/b", "/a/b/c.md"]`: what a folder filter matches against."""
    segments = [s for s in file_path.split("/") if s]
    return ["/"] + ["/" + "/".join(segments[: i + 1]) for i in range(len(segments))]


def clean_values(values: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """Trim, drop blanks and duplicates, keep order (tags, doc types, owners ...)."""
    cleaned: list[str] = []
    for value in values or ():
        text = value.strip()
        if text and text not in cleaned:
            cleaned.append(text)
    return tuple(cleaned)
