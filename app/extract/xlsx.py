"""Excel (openpyxl, read-only: rows stream from the file): one page per sheet, its name first,
then each row's non-empty cells joined by ` | `. Formulas give their cached values (what Excel
last computed and saved), never the formula text."""

import datetime as dt
from collections.abc import Iterable
from pathlib import Path

import openpyxl

from app.extract.model import Extracted, Format, paged


def extract(path: Path) -> Extracted:
    # A file object: given a path, openpyxl refuses any name not ending in .xlsx (an upload's
    # temporary file has none; the content was sniffed already).
    with path.open("rb") as file:
        workbook = openpyxl.load_workbook(file, read_only=True, data_only=True)
        try:
            sheets = [
                _sheet(sheet.title, sheet.iter_rows(values_only=True))
                for sheet in workbook.worksheets
            ]
            title = workbook.properties.title or None
        finally:
            workbook.close()
    return paged(Format.XLSX, sheets, title)


def _sheet(name: str, rows: Iterable[Iterable[object]]) -> str:
    lines = [name]
    for row in rows:
        cells = [cell_text(value) for value in row]
        if any(cells):
            lines.append(" | ".join(cell for cell in cells if cell))
    return "\n".join(lines)


def cell_text(value: object) -> str:
    """A cell as a person reads it: 12 rather than 12.0, dates in ISO form."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return " ".join(str(value).split())
