"""CSV and TSV (the standard library's csv reader): the delimiter is the one of tab, comma,
semicolon or pipe that splits the first lines into the same number of columns; TSV when it is
a tab. Decoded as plain text is (byte-order mark, UTF-8, else Windows-1252).

Each row becomes a paragraph of its own, its cells labelled by the header: `name: Ada; city:
London` (empty cells left out), rows a blank line apart. The labels, not the header repeated at
intervals, because the chunker, not this reader, decides where chunks end: a row carries its
column names into whatever chunk holds it, so a hit on `42` says what 42 is, to the reader and to
the embedding model; and the blank line ends a "sentence" for the chunker, so a row is cut only
when it alone is longer than a chunk. A table without a header row (its first row holds numbers,
empty or repeated cells) gives each row as its cells joined by ` | `, as the spreadsheets do.

Bounded: the file by the upload's size limit, a field by the csv module's (128 KiB), the text the
labels make by what an archive may expand to (SEARCH_MAX_ARCHIVE_BYTES)."""

import csv
import io
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from app.extract.archive import ArchiveLimits
from app.extract.errors import TooLarge, Unreadable
from app.extract.model import Extracted, Format, unpaged
from app.extract.plaintext import read_text

DELIMITERS = ("\t", ",", ";", "|")
_NAMES = (".csv", ".tsv", ".tab")
_MIME_TYPES = ("text/csv", "text/tab-separated-values", "application/csv")
_SAMPLE_LINES = 50
_NUMBER = re.compile(r"^[-+]?[\d.,' ]*\d[\d.,' ]*%?$|^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}")
MAX_LABEL = 100  # a header cell longer than this is no column name


def sniff(text: str, name: str, mime_type: str) -> Format | None:
    """CSV or TSV when `text` (the head of a file) is a table. Named `.csv`/`.tsv` (or sent
    as text/csv): two columns make a table; named `.txt` or sent as text/plain: never;
    otherwise the content alone must show one, at least three rows of the same three or more
    columns, never split on pipes (a Markdown table)."""
    declared = name.endswith(_NAMES) or mime_type.startswith(_MIME_TYPES)
    if not declared and (name.endswith((".txt", ".text")) or mime_type.startswith("text/plain")):
        return None  # named plain text: text, whatever its shape
    candidates = DELIMITERS if declared else DELIMITERS[:3]
    found = delimiter(text, candidates, min_columns=2 if declared else 3)
    if found is None and declared and name.endswith((".tsv", ".tab")):
        found = "\t"
    if found is None:
        return None
    return Format.TSV if found == "\t" else Format.CSV


def delimiter(
    text: str, candidates: tuple[str, ...] = DELIMITERS, min_columns: int = 2
) -> str | None:
    """The delimiter that splits the first lines of `text` into the most columns, the same
    number on at least nine lines in ten (and on two lines or more)."""
    lines = text.splitlines()[: _SAMPLE_LINES + 1]
    if len(lines) > _SAMPLE_LINES:  # the head may end inside a line
        lines = lines[:_SAMPLE_LINES]
    sample = "\n".join(lines)
    best: tuple[int, str] | None = None
    for candidate in candidates:
        try:
            widths = [len(row) for row in csv.reader(io.StringIO(sample), delimiter=candidate)]
        except csv.Error:
            continue
        widths = [width for width in widths if width]
        if len(widths) < (2 if min_columns <= 2 else 3):
            continue
        width, count = Counter(widths).most_common(1)[0]
        if (
            width >= min_columns
            and count >= 0.9 * len(widths)
            and (best is None or width > best[0])
        ):
            best = (width, candidate)
    return best[1] if best else None


def extract(path: Path, format: Format, limits: ArchiveLimits) -> Extracted:
    text = read_text(path)
    separator = delimiter(text[:65536]) or ("\t" if format is Format.TSV else ",")
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=separator)
    parts: list[str] = []
    size = 0
    try:
        for line in _lines(rows):
            size += len(line) + 2
            if size > limits.max_bytes:
                raise TooLarge(
                    f"the table's text runs past the {limits.max_bytes} characters a file may"
                    " expand to (SEARCH_MAX_ARCHIVE_BYTES)"
                )
            parts.append(line)
    except csv.Error as exc:
        raise Unreadable(f"the {format.value.upper()} file is damaged: {exc}") from exc
    return unpaged(format, "\n\n".join(parts))


def _lines(rows: Iterator[list[str]]) -> Iterator[str]:
    first = next(rows, None)
    if first is None:
        return
    cells = [_flat(cell) for cell in first]
    header = cells if _is_header(cells) else None
    if header is None:
        yield from _plain(cells)
    for row in rows:
        values = [_flat(cell) for cell in row]
        if header is None:
            yield from _plain(values)
            continue
        pairs = [
            f"{header[i] if i < len(header) else f'column {i + 1}'}: {value}"
            for i, value in enumerate(values)
            if value
        ]
        if pairs:
            yield "; ".join(pairs)


def _plain(values: list[str]) -> Iterator[str]:
    if any(values):
        yield " | ".join(value for value in values if value)


def _flat(cell: str) -> str:
    return " ".join(cell.split())


def _is_header(cells: list[str]) -> bool:
    named = [cell for cell in cells if cell]
    return (
        len(named) == len(cells)
        and len(set(named)) == len(named)
        and all(len(cell) <= MAX_LABEL and not _NUMBER.match(cell) for cell in named)
    )
