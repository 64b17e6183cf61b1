"""Which format a file is, from its content: magic bytes, the members of a ZIP archive, the shape
of a text. The file name and declared MIME type only tell Markdown from plain text, which no
content can."""

import re
from pathlib import Path

from app.extract import compound, image, rtf, tabular
from app.extract.archive import ArchiveLimits, open_checked
from app.extract.errors import Encrypted, UnsupportedFormat
from app.extract.model import Format
from app.extract.plaintext import decode

HEAD_BYTES = 64 * 1024
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # compound file: legacy Office, or encrypted OOXML
_ZIP = (b"PK\x03\x04", b"PK\x05\x06")
_OPENDOCUMENT = {
    "application/vnd.oasis.opendocument.text": Format.ODT,
    "application/vnd.oasis.opendocument.spreadsheet": Format.ODS,
    "application/vnd.oasis.opendocument.presentation": Format.ODP,
}
_OFFICE_PARTS = {
    "word/document.xml": Format.DOCX,
    "ppt/presentation.xml": Format.PPTX,
    "xl/workbook.xml": Format.XLSX,
    "META-INF/container.xml": Format.EPUB,
}
_HTML = re.compile(rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)\b", re.I | re.S)
_HEADER = re.compile(r"^([A-Za-z][A-Za-z0-9-]*):[ \t]*(.*)$")
_MAIL_HEADERS = {"from", "to", "subject", "date", "message-id", "received", "mime-version"}
_MARKDOWN_NAMES = (".md", ".markdown", ".mdown", ".mkd")
_MARKDOWN_LINE = re.compile(r"^(#{1,6} \S|```|\* \S|- \S|\d+\. \S|> \S)", re.M)


def detect(
    path: Path, limits: ArchiveLimits, name: str = "", mime_type: str | None = None
) -> Format:
    with path.open("rb") as file:
        head = file.read(HEAD_BYTES)
    if b"%PDF-" in head[:1024]:
        return Format.PDF
    if (picture := image.sniff(head)) is not None:
        return picture
    if head.startswith(_ZIP):
        return _archive_format(path, limits)
    if head.startswith(_OLE2):
        if "EncryptedPackage".encode("utf-16-le") in path.read_bytes():
            raise Encrypted("the Office file is password-protected: send it without a password")
        if (legacy := compound.sniff(path)) is not None:
            return legacy
        raise UnsupportedFormat(
            "legacy binary Office files (.xls, .ppt) are not supported: save the file as"
            " .docx, .xlsx, .pptx or OpenDocument"
        )
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(rtf.SIGNATURE):
        return Format.RTF
    return _text_format(head, name.lower(), (mime_type or "").lower())


def _archive_format(path: Path, limits: ArchiveLimits) -> Format:
    with open_checked(path, limits) as archive:
        names = set(archive.namelist())
        if "mimetype" in names:
            declared = archive.read("mimetype")[:200].decode("ascii", "replace").strip()
            for prefix, format in _OPENDOCUMENT.items():
                if declared.startswith(prefix):  # also the -template variants
                    return format
        for part, format in _OFFICE_PARTS.items():
            if part in names:
                return format
    raise UnsupportedFormat(
        "a ZIP archive that is not a Word, PowerPoint, Excel, OpenDocument or EPUB file"
    )


def _text_format(head: bytes, name: str, mime_type: str) -> Format:
    text = decode(head, partial=True)
    if text is None:
        raise UnsupportedFormat(
            "not a supported format: PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, HTML, Markdown, plain"
            " text, EML, MSG, DOC, RTF, EPUB, CSV or TSV"
        )
    if _HTML.match(head) or mime_type.startswith("text/html") or name.endswith((".html", ".htm")):
        return Format.HTML
    if _is_mail(text) or mime_type.startswith("message/rfc822") or name.endswith(".eml"):
        return Format.EML
    if name.endswith(_MARKDOWN_NAMES) or mime_type.startswith("text/markdown"):
        return Format.MARKDOWN
    if (table := tabular.sniff(text, name, mime_type)) is not None:
        return table
    named_text = name.endswith((".txt", ".text")) or mime_type.startswith("text/plain")
    if not named_text and len(_MARKDOWN_LINE.findall(text[:4096])) >= 2:
        return Format.MARKDOWN
    return Format.TEXT


def _is_mail(text: str) -> bool:
    """Starts with a header block (`Name: value` lines) naming at least two mail headers."""
    seen: set[str] = set()
    for line in text.splitlines()[:60]:
        if not line.strip():
            break
        match = _HEADER.match(line)
        if match:
            seen.add(match.group(1).lower())
        elif not line[:1].isspace():  # not a folded continuation
            return False
    return len(seen & _MAIL_HEADERS) >= 2 and bool(seen & {"from", "subject"})
