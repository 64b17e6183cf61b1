"""OpenDocument text, spreadsheets and presentations (ODT / ODS / ODP, the formats of Nextcloud
Office and LibreOffice), read from the archive's content.xml with lxml. ODS: one page per sheet,
a row as its non-empty cells joined by ` | ` (each cell's displayed text: a formula's result).
ODP: one page per slide, its notes last. ODT is unpaged, like Word."""

import zipfile
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from app.extract.archive import ArchiveLimits, open_checked
from app.extract.errors import Encrypted, Unreadable
from app.extract.model import Extracted, Format, paged, unpaged

_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "dc": "http://purl.org/dc/elements/1.1/",
    "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
}


def _tag(prefix: str, name: str) -> str:
    return f"{{{_NS[prefix]}}}{name}"


P, H = _tag("text", "p"), _tag("text", "h")
SPACE, TAB, BREAK = _tag("text", "s"), _tag("text", "tab"), _tag("text", "line-break")
LIST_ITEM = _tag("text", "list-item")
SLIDE = _tag("draw", "page")
TABLE, ROW, CELL = _tag("table", "table"), _tag("table", "table-row"), _tag("table", "table-cell")
ROWS_REPEATED = _tag("table", "number-rows-repeated")
COLUMNS_REPEATED = _tag("table", "number-columns-repeated")
SHEET_NAME = _tag("table", "name")
SPACES = _tag("text", "c")
# Not the document's text: deleted text kept for change tracking, declarations, forms.
SKIPPED = frozenset(
    {
        _tag("text", "tracked-changes"),
        _tag("text", "sequence-decls"),
        _tag("office", "forms"),
        _tag("office", "annotation"),
    }
)
MAX_REPEAT = 100  # a repeated non-empty row or cell: enough to search it, never a bomb
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True)


def extract(path: Path, format: Format, limits: ArchiveLimits) -> Extracted:
    with open_checked(path, limits) as archive:
        if _encrypted(archive):
            raise Encrypted("the OpenDocument file is password-protected: send it without one")
        body = _body(_parse(archive, "content.xml"))
        title = _title(archive)
    if format is Format.ODS:
        return paged(format, [_sheet(t) for t in body.iter(TABLE)], title)
    if format is Format.ODP:
        return paged(format, ["\n".join(_blocks(page)) for page in body.iter(SLIDE)], title)
    return unpaged(format, "\n\n".join(_blocks(body)), title)


def _parse(archive: zipfile.ZipFile, name: str) -> etree._Element:
    try:
        with archive.open(name) as part:
            return etree.parse(part, _PARSER).getroot()
    except (KeyError, etree.XMLSyntaxError, zipfile.BadZipFile, OSError) as exc:
        raise Unreadable(f"the OpenDocument file is damaged ({name}): {exc}") from exc


def _encrypted(archive: zipfile.ZipFile) -> bool:
    if "META-INF/manifest.xml" not in archive.namelist():
        return False
    manifest = _parse(archive, "META-INF/manifest.xml")
    return manifest.find(f".//{_tag('manifest', 'encryption-data')}") is not None


def _body(root: etree._Element) -> etree._Element:
    body = root.find(_tag("office", "body"))
    if body is None:
        raise Unreadable("the OpenDocument file has no body")
    return body


def _title(archive: zipfile.ZipFile) -> str | None:
    if "meta.xml" not in archive.namelist():
        return None
    title = _parse(archive, "meta.xml").find(f".//{_tag('dc', 'title')}")
    return title.text if title is not None else None


def _blocks(element: etree._Element, bullet: bool = False) -> Iterator[str]:
    """Paragraphs, headings, list items and tables in document order."""
    for child in element:
        if child.tag in (P, H):
            text = inline_text(child).strip()
            if text:
                yield f"- {text}" if bullet else text
        elif child.tag == LIST_ITEM:
            yield from _blocks(child, bullet=True)
        elif child.tag == TABLE:
            yield "\n".join(_rows(child))
        elif child.tag not in SKIPPED:
            yield from _blocks(child, bullet)


def inline_text(element: etree._Element) -> str:
    """A paragraph's text: spans, links and notes opened; `<text:s c="3"/>` is three spaces."""
    parts = [element.text or ""]
    for child in element:
        if child.tag == SPACE:
            parts.append(" " * min(int(child.get(SPACES, "1") or 1), MAX_REPEAT))
        elif child.tag == TAB:
            parts.append("\t")
        elif child.tag == BREAK:
            parts.append("\n")
        elif child.tag in (P, H):  # a note's or a text box's paragraph inside this one
            parts.append(f" {inline_text(child)} ")
        elif child.tag not in SKIPPED:
            parts.append(inline_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _sheet(table: etree._Element) -> str:
    return "\n".join([table.get(SHEET_NAME) or "", *_rows(table)])


def _rows(table: etree._Element) -> Iterator[str]:
    for row in table.iter(ROW):
        cells = [text for cell in row.iter(CELL) for text in _repeated(cell, COLUMNS_REPEATED)]
        if cells:
            yield from [" | ".join(cells)] * _repeat(row, ROWS_REPEATED)


def _repeated(cell: etree._Element, attribute: str) -> list[str]:
    text = " ".join(" ".join(inline_text(p).split()) for p in cell.iter(P)).strip()
    return [text] * _repeat(cell, attribute) if text else []


def _repeat(element: etree._Element, attribute: str) -> int:
    try:
        return max(1, min(int(element.get(attribute, "1") or 1), MAX_REPEAT))
    except ValueError:
        return 1
