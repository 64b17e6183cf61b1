"""Each format's extractor on real files: the text comes out, each page, slide or sheet holds its
own text, the format is found from the content whatever the file is called."""

from collections.abc import Callable
from pathlib import Path

import pytest

from app.extract.archive import ArchiveLimits
from app.extract.errors import Unreadable, UnsupportedFormat
from app.extract.model import Extracted, Format
from app.extract.reader import read_file
from tests.extract import samples

PAGES = [f"Page {n} talks about topic number {n} of the series." for n in range(1, 5)]
PAGE_3 = "The lighthouse keeper logged a northern gale on the third page."


def read(tmp_path: Path, data: bytes, name: str = "upload") -> Extracted:
    path = tmp_path / name
    path.write_bytes(data)
    return read_file(path, ArchiveLimits(), name)


def page(extracted: Extracted, number: int) -> str:
    """The text of one page (1-based)."""
    starts = [*extracted.page_starts, len(extracted.text)]
    return extracted.text[starts[number - 1] : starts[number]].strip()


PAGED: dict[str, tuple[Format, Callable[[list[str]], bytes]]] = {
    "pdf": (Format.PDF, samples.pdf),
    "pptx": (Format.PPTX, samples.pptx_file),
    "odp": (Format.ODP, samples.odp_file),
    "xlsx": (Format.XLSX, lambda texts: samples.xlsx_file([[[t]] for t in texts])),
    "ods": (Format.ODS, lambda texts: samples.ods_file([[t] for t in texts])),
}


@pytest.mark.parametrize("kind", sorted(PAGED))
def test_each_page_slide_or_sheet_holds_its_own_text(tmp_path: Path, kind: str) -> None:
    format, make = PAGED[kind]
    texts = [*PAGES[:2], PAGE_3, PAGES[3]]
    extracted = read(tmp_path, make(texts))
    assert extracted.format is format
    assert extracted.page_count == 4
    for number, text in enumerate(texts, 1):
        assert text in " ".join(page(extracted, number).split()), (number, extracted.text)
    assert PAGE_3 not in page(extracted, 2) and PAGE_3 not in page(extracted, 4)


@pytest.mark.parametrize(
    ("make", "format"),
    [
        (lambda: samples.docx_file(["Body of the memo.", PAGE_3], title="Memo"), Format.DOCX),
        (lambda: samples.odt_file(["Body of the memo.", PAGE_3]), Format.ODT),
        (lambda: samples.html_file(["Body of the memo.", PAGE_3], title="Memo"), Format.HTML),
        (lambda: samples.eml_file("Memo", f"Body of the memo.\n\n{PAGE_3}\n"), Format.EML),
    ],
)
def test_unpaged_formats_give_their_text_in_order(
    tmp_path: Path, make: Callable[[], bytes], format: Format
) -> None:
    extracted = read(tmp_path, make())
    assert extracted.format is format
    assert extracted.page_starts == () and extracted.page_count is None
    flat = " ".join(extracted.text.split())
    assert flat.index("Body of the memo.") < flat.index(PAGE_3)


def test_word_keeps_headings_lists_and_tables(tmp_path: Path) -> None:
    extracted = read(tmp_path, samples.docx_file(["A paragraph."], title="Quarterly memo"))
    lines = extracted.text.splitlines()
    assert lines[0] == "Overview"
    assert "- a listed item" in lines
    assert "north | south" in lines and "east | west" in lines
    assert extracted.title == "Quarterly memo"


def test_slides_carry_their_notes(tmp_path: Path) -> None:
    data = samples.pptx_file(["first", "second"], notes=["say hello", "say goodbye"])
    extracted = read(tmp_path, data)
    assert page(extracted, 1).splitlines() == ["Slide 1", "first", "say hello"]
    assert "say goodbye" in page(extracted, 2) and "say hello" not in page(extracted, 2)


def test_a_formula_gives_its_cached_value_not_its_text(tmp_path: Path) -> None:
    extracted = read(tmp_path, samples.xlsx_with_cached_formula(42))
    assert page(extracted, 1).splitlines() == ["Totals", "quarterly total | 40 | 2 | 42"]
    assert "B1" not in extracted.text


def test_html_leaves_out_scripts_styles_and_markup(tmp_path: Path) -> None:
    extracted = read(tmp_path, samples.html_file(["Fish &amp; chips <b>today</b>."]))
    assert extracted.text == "Fish & chips today."
    assert extracted.title == "A page"


def test_mail_gives_headers_body_and_attachment_names(tmp_path: Path) -> None:
    extracted = read(tmp_path, samples.eml_file("Budget 2026", "Numbers attached."))
    assert extracted.title == "Budget 2026"
    assert "From: alice@example.org" in extracted.text
    assert "Numbers attached." in extracted.text
    assert extracted.text.endswith("Attachments: q3.pdf")


def test_markdown_and_text_are_told_apart_by_name_or_shape(tmp_path: Path) -> None:
    markdown = b"# Release notes\n\n- faster search\n- new uploads\n"
    assert read(tmp_path, markdown, "notes.md").format is Format.MARKDOWN
    assert read(tmp_path, markdown, "upload").format is Format.MARKDOWN  # shaped like Markdown
    assert read(tmp_path, markdown, "notes.md").title == "Release notes"
    assert read(tmp_path, b"just a line of text", "upload").format is Format.TEXT
    latin = "caf\xe9 cr\xe8me".encode("cp1252")
    assert read(tmp_path, latin, "menu.txt").text == "café crème"
    utf16 = "\ufeffhello in UTF-16".encode("utf-16-le")
    assert read(tmp_path, utf16, "u.txt").text == "hello in UTF-16"


def test_the_content_decides_not_the_name(tmp_path: Path) -> None:
    docx_named_pdf = read(tmp_path, samples.docx_file(["Really a Word file."]), "report.pdf")
    assert docx_named_pdf.format is Format.DOCX
    pdf_named_txt = read(tmp_path, samples.pdf(["Really a PDF."]), "notes.txt")
    assert pdf_named_txt.format is Format.PDF and "Really a PDF." in pdf_named_txt.text
    with pytest.raises(Unreadable, match="PNG"):  # a PNG, if a damaged one
        read(tmp_path, b"\x89PNG\r\n\x1a\n" + bytes(200), "photo.md")
    with pytest.raises(UnsupportedFormat):
        read(tmp_path, b"GIF89a" + bytes(200), "photo.md")


def test_a_pdf_without_a_text_layer_has_no_text(tmp_path: Path) -> None:
    extracted = read(tmp_path, samples.pdf(["", "", ""]))
    assert extracted.page_count == 3 and not extracted.has_text


def test_a_pdf_encrypted_with_an_empty_password_is_read(tmp_path: Path) -> None:
    extracted = read(tmp_path, samples.pdf(["Only the permissions are locked."], password=""))
    assert "Only the permissions are locked." in extracted.text


SAMPLES = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize(
    ("name", "format", "pages", "phrase"),
    [
        ("chromium-report.pdf", Format.PDF, 3, "harbour"),
        ("newsletter.eml", Format.EML, None, "lantern pier"),
    ],
)
def test_committed_samples_from_other_writers(
    name: str, format: Format, pages: int | None, phrase: str
) -> None:
    """Files not written by the libraries that read them (see tests/data/README.md)."""
    extracted = read_file(SAMPLES / name, ArchiveLimits(), name)
    assert extracted.format is format and extracted.page_count == pages
    assert phrase in extracted.text.lower()


def test_the_chromium_pdf_keeps_its_pages_and_the_mail_its_encodings() -> None:
    report = read_file(SAMPLES / "chromium-report.pdf", ArchiveLimits())
    assert report.title == "Harbour report"
    assert "forty-two boats" in page(report, 3) and "forty-two" not in page(report, 2)
    mail = read_file(SAMPLES / "newsletter.eml", ArchiveLimits())
    assert mail.title == "Tide tables for März"
    assert "Grüsse, the office" in mail.text and "<b>" not in mail.text
