"""The PDF reader (PDFium) against the one it replaced (pypdf): the same words on the same pages
of the samples, whitespace aside; a page without a text layer is read by OCR only when it shows
an image; and the hyphen PDFium marks at a line end stays a hyphen and a line end."""

import difflib
import itertools
import unicodedata
from pathlib import Path

import pytest
from pypdf import PdfReader

from app.extract import ocr, pdf
from app.extract.model import Extracted
from tests.extract import samples, scans
from tests.ingest.test_written_text import pdf_lines

DATA = Path(__file__).parent.parent / "data"


def _prose(page: int) -> str:
    sentence = "Paragraph {0}.{1} of the report records an ordinary day at the harbour."
    return " ".join(sentence.format(page, i) for i in range(30))


SAMPLES = {
    "chromium report": lambda: (DATA / "chromium-report.pdf").read_bytes(),
    "chromium ligatures": lambda: (DATA / "chromium-ligatures.pdf").read_bytes(),
    "generated": lambda: samples.pdf(
        [_prose(n) for n in range(4)]
        + ["", "Ünïcödé \u2013 \u201cquotes\u201d \u2014 € 5 (x) \\ y"]
    ),
    "ligatures and hyphens": lambda: pdf_lines(
        [
            ["the de\x80nitive guide, o\x81cially reviewed"],
            ["The index was cre-", "ated from the declara-", "tions of the schema."],
        ]
    ),
}


def words(text: str) -> list[str]:
    """The words as the index sees them (NFKC, as the normalisation makes them)."""
    return unicodedata.normalize("NFKC", text).split()


def pages_of(extracted: Extracted) -> list[str]:
    starts = [*extracted.page_starts, len(extracted.text)]
    return [extracted.text[a:b].strip() for a, b in itertools.pairwise(starts)]


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_pdfium_gives_pypdfs_words_on_the_same_pages(tmp_path: Path, name: str) -> None:
    path = tmp_path / "sample.pdf"
    path.write_bytes(SAMPLES[name]())
    theirs = [page.extract_text() for page in PdfReader(path).pages]
    ours = pdf.extract(path)
    assert ours.page_count == len(theirs) and ours.extraction == "text"
    matched = total = 0
    for number, (old, new) in enumerate(zip(theirs, pages_of(ours), strict=True), 1):
        a, b = words(old), words(new)
        blocks = difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
        matched += sum(block.size for block in blocks)
        total += max(len(a), len(b))
        assert a == b, (name, number, list(difflib.ndiff(a, b)))
    assert total == 0 or matched / total == 1.0


def test_a_word_hyphenated_at_a_line_end_keeps_its_hyphen_and_break(tmp_path: Path) -> None:
    path = tmp_path / "hyphen.pdf"
    path.write_bytes(pdf_lines([["The index was cre-", "ated yesterday."]]))
    assert pdf.extract(path).text == "The index was cre-\nated yesterday."


def test_the_title_comes_from_the_document_information(tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes((DATA / "chromium-report.pdf").read_bytes())
    assert pdf.extract(path).title == "Harbour report"


def test_an_empty_page_without_an_image_is_not_sent_to_ocr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_ocr(*_: object) -> str:
        raise AssertionError("a blank page was sent to OCR")

    monkeypatch.setattr(ocr, "recognise", no_ocr)
    path = tmp_path / "blank.pdf"
    path.write_bytes(samples.pdf(["Some text.", "", "More text."]))
    extracted = pdf.extract(path)
    assert pages_of(extracted)[1] == "" and extracted.extraction == "text"


def test_scanned_pages_stay_empty_without_tesseract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shutil.which", lambda _: None)
    ocr.languages.cache_clear()
    try:
        path = tmp_path / "scan.pdf"
        path.write_bytes(scans.mixed_pdf(["Typed page.", scans.snippet("Scanned page.")]))
        extracted = pdf.extract(path)
    finally:
        ocr.languages.cache_clear()
    assert pages_of(extracted) == ["Typed page.", ""]
    assert extracted.extraction == "text"
