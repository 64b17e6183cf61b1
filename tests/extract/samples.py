"""Real files of every format, written by the libraries that read them (pypdf, python-docx,
python-pptx, openpyxl) or by other writers (odfpy for OpenDocument, XlsxWriter for formulas'
cached values), with a given text on each page, slide or sheet."""

import io
import zipfile
from email.message import EmailMessage
from textwrap import wrap
from typing import Any, Protocol

import docx
import openpyxl
import pptx
from odf.draw import Frame, Page, TextBox
from odf.opendocument import (
    OpenDocumentPresentation,
    OpenDocumentSpreadsheet,
    OpenDocumentText,
)
from odf.style import MasterPage, PageLayout
from odf.table import Table, TableCell, TableRow
from odf.text import H, P
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

HELVETICA = DictionaryObject(
    {
        NameObject("/Type"): NameObject("/Font"),
        NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"),
        NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
    }
)


def _pdf_escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf(pages: list[str], password: str | None = None, algorithm: str = "AES-256") -> bytes:
    """One PDF page per text (empty text: a page without a text layer, as a scan is)."""
    writer = PdfWriter()
    for text in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): HELVETICA})}
        )
        lines = [f"({_pdf_escape(line)}) Tj T*" for line in wrap(text, 90)]
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 10 Tf 13 TL 40 750 Td {' '.join(lines)} ET".encode("cp1252"))
        page.replace_contents(stream.flate_encode())  # compressed, as PDF writers do
    if password is not None:
        writer.encrypt(user_password=password, owner_password="owner", algorithm=algorithm)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


class _Savable(Protocol):
    def save(self, file: Any) -> Any: ...


def _written(document: _Savable) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def docx_file(paragraphs: list[str], title: str = "") -> bytes:
    document = docx.Document()
    document.core_properties.title = title
    document.add_heading("Overview", level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    document.add_paragraph("a listed item", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    for (row, column), text in zip(
        [(0, 0), (0, 1), (1, 0), (1, 1)], ["north", "south", "east", "west"], strict=True
    ):
        table.cell(row, column).text = text
    return _written(document)


def pptx_file(slides: list[str], notes: list[str] | None = None) -> bytes:
    presentation = pptx.Presentation()
    for number, text in enumerate(slides, 1):
        slide = presentation.slides.add_slide(presentation.slide_layouts[1])
        slide.shapes.title.text = f"Slide {number}"
        slide.placeholders[1].text = text
        if notes is not None:
            slide.notes_slide.notes_text_frame.text = notes[number - 1]
    return _written(presentation)


def xlsx_file(sheets: list[list[list[object]]]) -> bytes:
    workbook = openpyxl.Workbook(write_only=True)
    for number, rows in enumerate(sheets, 1):
        sheet = workbook.create_sheet(f"Sheet {number}")
        for row in rows:
            sheet.append(row)
    return _written(workbook)


def xlsx_with_cached_formula(value: int) -> bytes:
    """A formula with the value Excel saved for it (openpyxl cannot write one; XlsxWriter can)."""
    import xlsxwriter

    buffer = io.BytesIO()
    workbook = xlsxwriter.Workbook(buffer, {"in_memory": True})
    sheet = workbook.add_worksheet("Totals")
    sheet.write_row(0, 0, ["quarterly total", 40, 2])
    sheet.write_formula(0, 3, "=B1+C1", None, value)
    workbook.close()
    return buffer.getvalue()


def odt_file(paragraphs: list[str]) -> bytes:
    document = OpenDocumentText()
    document.text.addElement(H(outlinelevel=1, text="Overview"))
    for text in paragraphs:
        document.text.addElement(P(text=text))
    return _written(document)


def ods_file(sheets: list[list[str]]) -> bytes:
    document = OpenDocumentSpreadsheet()
    for number, cells in enumerate(sheets, 1):
        table = Table(name=f"Sheet {number}")
        for text in cells:
            row = TableRow()
            cell = TableCell(valuetype="string")
            cell.addElement(P(text=text))
            row.addElement(cell)
            table.addElement(row)
        document.spreadsheet.addElement(table)
    return _written(document)


def odp_file(slides: list[str]) -> bytes:
    document = OpenDocumentPresentation()
    layout = PageLayout(name="layout")
    document.automaticstyles.addElement(layout)
    master = MasterPage(name="master", pagelayoutname=layout)
    document.masterstyles.addElement(master)
    for text in slides:
        page = Page(masterpagename=master)
        frame = Frame(width="20cm", height="10cm", x="1cm", y="1cm")
        box = TextBox()
        box.addElement(P(text=text))
        frame.addElement(box)
        page.addElement(frame)
        document.presentation.addElement(page)
    return _written(document)


def html_file(paragraphs: list[str], title: str = "A page") -> bytes:
    body = "".join(f"<p>{text}</p>" for text in paragraphs)
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title><style>p {{color: red}}</style>"
        f"<script>var hidden = 'script text';</script></head><body>{body}</body></html>"
    ).encode()


def eml_file(subject: str, body: str) -> bytes:
    message = EmailMessage()
    message["From"] = "alice@example.org"
    message["To"] = "bob@example.org"
    message["Subject"] = subject
    message["Date"] = "Mon, 04 May 2026 10:00:00 +0000"
    message.set_content(body)
    message.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="q3.pdf")
    return bytes(message)


def zip_file(entries: dict[str, bytes], level: int = 9) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()
