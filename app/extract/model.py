"""What an extractor gives back: the document's text, and where each page, slide or sheet of it
starts. The text is what gets indexed (and queued), so a restart never needs the file again."""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

PAGE_SEPARATOR = "\n\n"  # between pages: a blank line also ends a sentence for the chunker
# Control characters other than tab and newlines, and lone surrogates: no engine, encoder or
# JSON payload takes them.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


class Format(StrEnum):
    PDF = "pdf"
    DOCX = "docx"
    PPTX = "pptx"
    XLSX = "xlsx"
    ODT = "odt"
    ODS = "ods"
    ODP = "odp"
    HTML = "html"
    MARKDOWN = "markdown"
    TEXT = "text"
    EML = "eml"
    DOC = "doc"
    RTF = "rtf"
    EPUB = "epub"
    MSG = "msg"
    CSV = "csv"
    TSV = "tsv"
    PNG = "png"  # images and photos, read by OCR (app.extract.image)
    JPEG = "jpeg"
    TIFF = "tiff"
    WEBP = "webp"
    HEIC = "heic"


MIME_TYPES = {
    Format.PDF: "application/pdf",
    Format.DOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    Format.PPTX: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    Format.XLSX: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    Format.ODT: "application/vnd.oasis.opendocument.text",
    Format.ODS: "application/vnd.oasis.opendocument.spreadsheet",
    Format.ODP: "application/vnd.oasis.opendocument.presentation",
    Format.HTML: "text/html",
    Format.MARKDOWN: "text/markdown",
    Format.TEXT: "text/plain",
    Format.EML: "message/rfc822",
    Format.DOC: "application/msword",
    Format.RTF: "application/rtf",
    Format.EPUB: "application/epub+zip",
    Format.MSG: "application/vnd.ms-outlook",
    Format.CSV: "text/csv",
    Format.TSV: "text/tab-separated-values",
    Format.PNG: "image/png",
    Format.JPEG: "image/jpeg",
    Format.TIFF: "image/tiff",
    Format.WEBP: "image/webp",
    Format.HEIC: "image/heic",
}
# Slides, sheets and e-book chapters are units of their own: a chunk never spans two. PDF pages
# are only where the layout broke the text, so a chunk may run across a page break.
SEALED = frozenset({Format.PPTX, Format.ODP, Format.XLSX, Format.ODS, Format.EPUB})


def clean(text: str) -> str:
    return _UNPRINTABLE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


@dataclass(frozen=True)
class Extracted:
    format: Format
    text: str
    page_starts: tuple[int, ...]  # where each page starts in `text`; () for unpaged formats
    title: str | None = None  # the file's own title (metadata, <title>, first heading, subject)
    extraction: str = "text"  # text | ocr (every page read by OCR) | mixed (some pages)

    @property
    def mime_type(self) -> str:
        return MIME_TYPES[self.format]

    @property
    def page_count(self) -> int | None:
        return len(self.page_starts) if self.page_starts else None

    @property
    def sealed(self) -> bool:
        return self.format in SEALED

    @property
    def has_text(self) -> bool:
        return bool(self.text.strip())


def unpaged(format: Format, text: str, title: str | None = None) -> Extracted:
    return Extracted(format, clean(text).strip(), (), _title(title))


def paged(format: Format, pages: Sequence[str], title: str | None = None) -> Extracted:
    """The pages joined by a blank line, each page's start kept (an empty page keeps its number)."""
    starts: list[int] = []
    parts: list[str] = []
    offset = 0
    for page in pages:
        text = clean(page).strip()
        starts.append(offset)
        parts.append(text)
        offset += len(text) + len(PAGE_SEPARATOR)
    return Extracted(format, PAGE_SEPARATOR.join(parts), tuple(starts), _title(title))


def _title(title: str | None) -> str | None:
    flat = " ".join(clean(title or "").split())
    return flat[:1000] or None
