"""One file in, its text out: the format found by sniffing, then that format's extractor. Any
failure of a reader on a file it was given is that file's fault: `unreadable`."""

import zipfile
from pathlib import Path

from lxml import etree

from app.extract import (
    doc,
    docx,
    eml,
    epub,
    html,
    image,
    markdown,
    msg,
    opendocument,
    pdf,
    plaintext,
    pptx,
    rtf,
    tabular,
    xlsx,
)
from app.extract.archive import ArchiveLimits
from app.extract.attachments import Attachments
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
    Format.DOC: doc.extract,
    Format.RTF: rtf.extract,
    **dict.fromkeys(image.FORMATS, image.extract),
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
    path: Path,
    limits: ArchiveLimits,
    name: str = "",
    mime_type: str | None = None,
    attachments: Attachments | None = None,
) -> Extracted:
    """The file's text (FileRefused / TooLarge when it cannot or may not be read). A mail's
    attachments are read through this same function, within `attachments`' bounds (given for
    an attachment that is itself a mail; a file sent on its own starts them afresh)."""
    format = detect(path, limits, name, mime_type)
    try:
        if format in (Format.ODT, Format.ODS, Format.ODP):
            return opendocument.extract(path, format, limits)
        if format is Format.EPUB:
            return epub.extract(path, limits)
        if format in (Format.CSV, Format.TSV):
            return tabular.extract(path, format, limits)
        if format in (Format.EML, Format.MSG):
            mail = eml.extract if format is Format.EML else msg.extract
            return mail(path, attachments or Attachments(read_file, limits))
        return _PLAIN[format](path)
    except (FileRefused, TooLarge):
        raise
    except _DAMAGED as exc:
        raise Unreadable(
            f"the {format.value.upper()} file is damaged: {type(exc).__name__}: {exc}"
        ) from exc
