"""One file in, its text out: the format found by sniffing, then that format's extractor. Any
failure of a reader on a file it was given is that file's fault: `unreadable`."""

import zipfile
from pathlib import Path

from lxml import etree

from app.extract import docx, eml, html, markdown, opendocument, pdf, plaintext, pptx, xlsx
from app.extract.archive import ArchiveLimits
from app.extract.errors import FileRefused, TooLarge, Unreadable
from app.extract.model import Extracted, Format
from app.extract.sniff import detect

_PLAIN = {
    Format.PDF: pdf.extract,
    Format.DOCX: docx.extract,
    Format.PPTX: pptx.extract,
    Format.XLSX: xlsx.extract,
    Format.HTML: html.extract,
    Format.MARKDOWN: markdown.extract,
    Format.TEXT: plaintext.extract,
    Format.EML: eml.extract,
}
_DAMAGED = (
    zipfile.BadZipFile,
    etree.LxmlError,
    KeyError,
    ValueError,
    TypeError,
    AttributeError,
    IndexError,
    EOFError,
    RecursionError,
    OSError,
)


def read_file(
    path: Path, limits: ArchiveLimits, name: str = "", mime_type: str | None = None
) -> Extracted:
    """The file's text (FileRefused / TooLarge when it cannot or may not be read)."""
    format = detect(path, limits, name, mime_type)
    try:
        if format in (Format.ODT, Format.ODS, Format.ODP):
            return opendocument.extract(path, format, limits)
        return _PLAIN[format](path)
    except (FileRefused, TooLarge):
        raise
    except _DAMAGED as exc:
        raise Unreadable(
            f"the {format.value.upper()} file is damaged: {type(exc).__name__}: {exc}"
        ) from exc
