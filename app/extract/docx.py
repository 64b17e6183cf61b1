"""Word (python-docx): paragraphs and tables in document order; headings and list items on lines
of their own (a list item marked `-`), a table row as its cells joined by ` | `. Word files have
no fixed pages (the layout makes them), so the text is unpaged."""

from pathlib import Path

import docx
from docx.table import Table
from docx.text.paragraph import Paragraph

from app.extract.model import Extracted, Format, unpaged


def extract(path: Path) -> Extracted:
    document = docx.Document(str(path))
    blocks = [_block(item) for item in document.iter_inner_content()]
    title = document.core_properties.title or None
    return unpaged(Format.DOCX, "\n\n".join(block for block in blocks if block), title)


def _block(item: Paragraph | Table) -> str:
    if isinstance(item, Table):
        return _table(item)
    text = item.text.strip()
    if text and _is_list_item(item):
        return f"- {text}"
    return text


def _is_list_item(paragraph: Paragraph) -> bool:
    properties = paragraph._p.pPr
    numbered = properties is not None and properties.numPr is not None
    style = paragraph.style.name if paragraph.style is not None else ""
    return numbered or (style or "").startswith("List")


def _table(table: Table) -> str:
    rows = []
    for row in table.rows:
        seen: set[int] = set()
        cells = []
        for cell in row.cells:  # a merged cell comes once per grid column it spans
            if id(cell._tc) not in seen:
                seen.add(id(cell._tc))
                cells.append(" ".join(cell.text.split()))
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)
