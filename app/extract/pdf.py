"""PDF, page by page, with PDFium (pypdfium2: Chromium's PDF library, native code). A page with
no text layer that shows an image (a scan, a photo of a page), or only a scanner app's stamp of
text over a page-sized image, is rendered at 300 dpi and read by OCR (app.extract.ocr) in place:
the page numbers stay those of the file, and the text says how it was obtained (`extraction`:
"text", "ocr" when every page with text was read by OCR, "mixed" when some were). A page that
fails to parse is kept as an empty page, so the pages after it keep their numbers; a file whose
every page fails is unreadable.

Why PDFium and not pypdf (pure Python, the reader before): a browser-printed PDF (Skia, subset
fonts, ~4,600 text operators a page) reads at 8.8 pages/s with pypdf and at 256 with PDFium
(bench/files/extraction.py, medians of 3 runs on the shared machine), with the same words on the
same pages (tests/extract/test_pdf.py); PDFium also renders the pages that need OCR. It opens
PDFs encrypted with an empty user password by itself, and reads the title from the document
information: pypdf is left to the tests, which write their PDFs with it."""

import logging
from dataclasses import replace
from pathlib import Path

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from app.extract import ocr
from app.extract.errors import Encrypted, Unreadable
from app.extract.model import Extracted, Format, paged

log = logging.getLogger(__name__)

OCR_DPI = 300
MAX_RENDER_PIXELS = 36_000_000  # a page bigger than A2 at 300 dpi is rendered at a lower dpi
STAMP_CHARACTERS = 80  # less text than this over a page-sized image: a scan with a stamp on it
SCAN_COVER = 0.5  # the share of the page its images cover for that
# PDFium marks a hyphen it took for a line-end break (U+0002, U+FFFE in UCS-2 text): written as
# the hyphen and line end it stands for, as pypdf gives them (the normalisation joins the word).
_SOFT_HYPHENS = str.maketrans({"\x02": "-\n", "\ufffe": "-\n"})


def extract(path: Path) -> Extracted:
    document = _open(path)
    try:
        return _read(document)
    finally:
        document.close()


def _open(path: Path) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code == pdfium_c.FPDF_ERR_PASSWORD:
            raise Encrypted("the PDF is password-protected: send it without a password") from exc
        if code == pdfium_c.FPDF_ERR_SECURITY:
            raise Encrypted(f"the PDF's encryption is not supported: {exc}") from exc
        raise Unreadable(f"the PDF is damaged: {exc}") from exc


def _read(document: pdfium.PdfDocument) -> Extracted:
    texts: list[str] = []
    failed = by_ocr = by_layer = 0
    reader = _Ocr()
    count = len(document)
    for number in range(1, count + 1):
        try:
            page = document[number - 1]
            try:
                layer = _text_layer(page)
                read = reader.page(page, number) if _looks_scanned(page, layer) else ""
            finally:
                page.close()
        except Exception as exc:  # one bad page must not cost the others
            log.info("PDF page %d not read: %s: %s", number, type(exc).__name__, exc)
            texts.append("")
            failed += 1
            continue
        texts.append("\n\n".join(part for part in (layer.strip(), read) if part))
        by_ocr += bool(read)
        by_layer += bool(layer.strip()) and not read
    if count and failed == count:
        raise Unreadable("no page of the PDF could be read")
    extracted = paged(Format.PDF, texts, _title(document))
    if by_ocr:
        return replace(extracted, extraction="mixed" if by_layer else "ocr")
    return extracted


class _Ocr:
    """OCR of one file's scanned pages; once Tesseract is found missing, the rest stay empty."""

    def __init__(self) -> None:
        self.off = False

    def page(self, page: pdfium.PdfPage, number: int) -> str:
        if self.off:
            return ""
        try:
            return _recognised(page).strip()
        except ocr.OcrUnavailable as exc:
            self.off = True
            log.warning("scanned PDF pages stay without text: %s", exc)
        except RuntimeError as exc:
            log.warning("OCR of PDF page %d failed: %s", number, exc)
        return ""


def _looks_scanned(page: pdfium.PdfPage, layer: str) -> bool:
    """A page to read by OCR: no text layer and an image on it, or a few words of text layer
    (a scanner app's stamp) over an image that covers most of the page."""
    text = layer.strip()
    if len(text) >= STAMP_CHARACTERS:
        return False
    width, height = page.get_size()
    covered = 0.0
    for image in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,)):
        if not text:
            return True
        left, bottom, right, top = image.get_bounds()
        covered += max(0.0, min(right, width) - max(left, 0.0)) * max(
            0.0, min(top, height) - max(bottom, 0.0)
        )
    return bool(covered >= SCAN_COVER * width * height > 0)


def _text_layer(page: pdfium.PdfPage) -> str:
    textpage = page.get_textpage()
    try:
        return str(textpage.get_text_bounded()).translate(_SOFT_HYPHENS)
    finally:
        textpage.close()


def _recognised(page: pdfium.PdfPage) -> str:
    width, height = page.get_size()  # points
    scale = OCR_DPI / 72
    pixels = width * scale * height * scale
    if pixels > MAX_RENDER_PIXELS:
        scale *= (MAX_RENDER_PIXELS / pixels) ** 0.5
    bitmap = page.render(scale=scale, grayscale=True)
    try:
        image = bitmap.to_pil()
        return ocr.recognise(image, round(scale * 72))
    finally:
        bitmap.close()


def _title(document: pdfium.PdfDocument) -> str | None:
    try:
        return document.get_metadata_value("Title") or None
    except Exception:  # a damaged /Info dictionary costs the title only
        return None
