"""Outlook items (.msg, extract-msg): the headers, the body (the plain text, else the HTML read as
text, else the RTF body read as RTF files are), then every attached Outlook item as a forwarded
message under its subject as a heading, then the attachments as for an EML (app.extract.eml:
their names, and each one in a format the service reads under its file name as a heading). The
subject is the title. Calendar items, contacts and tasks give their subject and body too. An
encrypted S/MIME message (IPM.Note.SMIME) is refused; an attachment that cannot be read is
skipped."""

import logging
from collections.abc import Iterable
from datetime import datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import extract_msg
from extract_msg.enums import AttachmentType, ErrorBehavior
from extract_msg.exceptions import ExMsgBaseException

from app.extract.attachments import Attachments
from app.extract.eml import FORWARDED_HEADERS, render
from app.extract.errors import Encrypted, Unreadable
from app.extract.html import html_text
from app.extract.model import Extracted, Format
from app.extract.rtf import rtf_text

log = logging.getLogger(__name__)

MAX_FORWARDED_DEPTH = 20
# A broken or unknown attachment becomes a placeholder instead of failing the whole item.
_TOLERANT = (
    ErrorBehavior.ATTACH_NOT_IMPLEMENTED
    | ErrorBehavior.ATTACH_BROKEN
    | ErrorBehavior.RTFDE_MALFORMED
    | ErrorBehavior.RTFDE_UNKNOWN_ERROR
    | ErrorBehavior.STANDARDS_VIOLATION
    | ErrorBehavior.OLE_DEFECT_INCORRECT
    | ErrorBehavior.NAMED_NAME_STREAM
)
_FILES = (AttachmentType.DATA, AttachmentType.SIGNED)
_ITEMS = (AttachmentType.MSG, AttachmentType.SIGNED_EMBEDDED)


def extract(path: Path, attachments: Attachments | None = None) -> Extracted:
    try:
        item = extract_msg.openMsg(str(path), errorBehavior=_TOLERANT, strict=False)
    except (ExMsgBaseException, OSError, ValueError, TypeError, KeyError) as exc:
        raise Unreadable(f"the Outlook file is damaged: {type(exc).__name__}: {exc}") from exc
    try:
        if (_get(item, "classType") or "").lower() == "ipm.note.smime":
            raise Encrypted("the Outlook message is encrypted (S/MIME): send it decrypted")
        outlook = _Item()
        outlook.walk(item, 0)
        header = "\n".join(_headers(item, ("From", "To", "Cc", "Date", "Subject")))
        subject = _get(item, "subject") or None
        return render(Format.MSG, header, outlook.body, outlook.files, attachments, subject)
    finally:
        item.close()


class _Item:
    """An item's parts in order: `body` the texts (attached items under their heading),
    `files` the attachments (name, bytes, declared MIME type)."""

    def __init__(self) -> None:
        self.body: list[str] = []
        self.files: list[tuple[str, bytes, str | None]] = []

    def walk(self, item: Any, depth: int) -> None:
        text = _body(item)
        if text.strip():
            self.body.append(text)
        for attachment in _get(item, "attachments") or ():
            kind = _get(attachment, "type")
            if kind in _ITEMS:
                self._forwarded(_get(attachment, "data"), depth)
            elif kind in _FILES and not _get(attachment, "hidden"):
                self._file(attachment)

    def _forwarded(self, item: Any, depth: int) -> None:
        if item is None:
            return
        subject = (_get(item, "subject") or "").strip()
        lines = [f"Forwarded message: {subject}" if subject else "Forwarded message"]
        self.body.append("\n".join([*lines, *_headers(item, FORWARDED_HEADERS)]))
        if depth + 1 > MAX_FORWARDED_DEPTH:
            log.info("attached item %r not read: nested %d deep", subject, depth + 1)
        else:
            self.walk(item, depth + 1)

    def _file(self, attachment: Any) -> None:
        data = _get(attachment, "data")
        if not isinstance(data, bytes):
            return
        name = (
            _get(attachment, "longFilename")
            or _get(attachment, "shortFilename")
            or _get(attachment, "displayName")
            or f"attachment {len(self.files) + 1}"
        )
        self.files.append((" ".join(str(name).split()), data, _get(attachment, "mimetype")))


def _get(thing: Any, name: str) -> Any:
    """An attribute of an extract-msg object: most are read from the file when first asked for,
    so a damaged property costs that property only."""
    try:
        return getattr(thing, name, None)
    except Exception as exc:
        log.info("Outlook property %s not read: %s: %s", name, type(exc).__name__, exc)
        return None


def _headers(item: Any, names: Iterable[str]) -> list[str]:
    values = {
        "From": _get(item, "sender"),
        "To": _get(item, "to"),
        "Cc": _get(item, "cc"),
        "Date": _get(item, "date"),
        "Subject": _get(item, "subject"),
    }
    lines = []
    for name in names:
        value = values[name]
        if isinstance(value, datetime):
            value = format_datetime(value)
        if value:
            lines.append(f"{name}: {' '.join(str(value).split())}")
    return lines


def _body(item: Any) -> str:
    body = _get(item, "body")
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body.strip():
        return body
    html = _get(item, "htmlBody")
    if isinstance(html, bytes | str) and html:
        return html_text(html).text
    rtf = _get(item, "rtfBody")
    if isinstance(rtf, bytes) and rtf:
        return rtf_text(rtf.decode("cp1252", "replace"))
    return ""
