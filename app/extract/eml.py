"""E-mail (RFC 822 / MIME, the standard library's parser with policy.default: parts are found by
the MIME structure, never by splitting on boundary lines, so a line that looks like a boundary
inside a part stays text). The main headers, then every inline text part that is not an
attachment, in order (within a multipart/alternative only one: the plain text, else the HTML
read as text); every forwarded message (`message/rfc822`, each part of a multipart/digest)
under its subject as a heading, its own parts in turn; then the attachments' names, and each
attachment in a format the service reads, under its file name as a heading (read through the
same dispatch as any file, within the mail's bounds: app.extract.attachments). The subject is
the title. A mail whose body is encrypted (S/MIME enveloped data, PGP/MIME) is refused."""

import logging
import re
from dataclasses import replace
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser
from pathlib import Path

from app.extract.attachments import Attachments, extraction
from app.extract.errors import Encrypted, Unreadable
from app.extract.html import html_text
from app.extract.model import Extracted, Format, unpaged

log = logging.getLogger(__name__)

HEADERS = ("From", "To", "Cc", "Date", "Subject")
FORWARDED_HEADERS = ("From", "To", "Cc", "Date")
MAX_FORWARDED_DEPTH = 20  # forwarded messages inside forwarded messages: deeper ones are named
# Parts that are neither text nor a file a person attached: signatures, and the key material of
# encrypted mail.
_NOT_ATTACHMENTS = frozenset(
    {
        "application/pkcs7-signature",
        "application/x-pkcs7-signature",
        "application/pgp-signature",
        "application/pgp-keys",
        "application/pgp-encrypted",
    }
)
_TAGS = re.compile(r"<[^>]*>")


def extract(path: Path, attachments: Attachments | None = None) -> Extracted:
    """The mail's text; its attachments are read only when `attachments` gives the means."""
    with path.open("rb") as file:
        message = BytesParser(policy=policy.default).parse(file)
    if not isinstance(message, EmailMessage):  # policy.default builds EmailMessage objects
        raise Unreadable("the e-mail could not be parsed")
    if encrypted(message):
        raise Encrypted("the e-mail is encrypted (S/MIME or PGP): send it decrypted")
    mail = _Mail()
    mail.walk(message, 0)
    header = "\n".join(f"{name}: {message[name]}" for name in HEADERS if message[name])
    subject = str(message["Subject"] or "") or None
    return render(Format.EML, header, mail.body, mail.files, attachments, subject)


def render(
    format: Format,
    header: str,
    body: list[str],
    files: list[tuple[str, bytes, str | None]],
    attachments: Attachments | None,
    title: str | None,
) -> Extracted:
    """A mail's text: its header lines, its body's parts, its attachments' names, then each
    attachment read under its name as a heading (`Attachment: report.pdf`)."""
    parts = [header, *body]
    names = [name for name, _, _ in files]
    if names:
        parts.append("Attachments: " + ", ".join(names))
    read: list[Extracted] = []
    if attachments is not None:
        for name, data, mime_type in files:
            found = attachments.text(name, data, mime_type)
            if found is not None and found.has_text:
                read.append(found)
                parts.append(f"Attachment: {name}\n\n{found.text}")
    text = "\n\n".join(part.strip() for part in parts if part.strip())
    body_has_text = any(part.strip() for part in body)
    return replace(unpaged(format, text, title), extraction=extraction(body_has_text, read))


def encrypted(message: Message) -> bool:
    content_type = message.get_content_type()
    if content_type == "multipart/encrypted":
        return True
    if content_type in ("application/pkcs7-mime", "application/x-pkcs7-mime"):
        smime_type = str(message.get_param("smime-type", "") or "").lower()
        return smime_type in ("enveloped-data", "authenveloped-data") or (
            not smime_type and (message.get_filename() or "").lower().endswith(".p7m")
        )
    return False


class _Mail:
    """A message's parts in order: `body` the texts (forwarded messages under their heading),
    `files` the attachments (name, bytes, declared MIME type)."""

    def __init__(self) -> None:
        self.body: list[str] = []
        self.files: list[tuple[str, bytes, str | None]] = []

    def walk(self, part: Message, depth: int) -> None:
        content_type = part.get_content_type()
        if content_type in _NOT_ATTACHMENTS:
            return
        if part.is_multipart() and content_type != "message/rfc822":
            children = [child for child in _payload_list(part) if isinstance(child, Message)]
            if content_type == "multipart/alternative":
                children = _alternative(children)
            for child in children:
                self.walk(child, depth)
        elif content_type == "message/rfc822":
            self._forwarded(part, depth)
        elif _is_attachment(part):
            self._attachment(part)
        elif part.get_content_maintype() == "text":
            text = _text(part)
            if text.strip():
                self.body.append(text)

    def _forwarded(self, part: Message, depth: int) -> None:
        inner = _payload_list(part)
        message = inner[0] if inner and isinstance(inner[0], Message) else None
        if message is None:
            return
        subject = str(message["Subject"] or "").strip()
        lines = [f"Forwarded message: {subject}" if subject else "Forwarded message"]
        lines += [f"{name}: {message[name]}" for name in FORWARDED_HEADERS if message[name]]
        self.body.append("\n".join(lines))
        if depth + 1 > MAX_FORWARDED_DEPTH:
            log.info("forwarded message %r not read: nested %d deep", subject, depth + 1)
        elif encrypted(message):
            self.body.append("(encrypted)")
        else:
            self.walk(message, depth + 1)

    def _attachment(self, part: Message) -> None:
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        name = part.get_filename() or f"attachment {len(self.files) + 1}"
        self.files.append((" ".join(name.split()), data, part.get_content_type()))


def _payload_list(part: Message) -> list[Message]:
    payload = part.get_payload()
    return (
        [item for item in payload if isinstance(item, Message)] if isinstance(payload, list) else []
    )


def _alternative(children: list[Message]) -> list[Message]:
    """The one alternative to read: the plain text if it says something, else the HTML, else
    the last (the richest, RFC 2046)."""
    for wanted in ("text/plain", "text/html"):
        for child in children:
            wanted_here = child.get_content_type() == wanted and not _is_attachment(child)
            if wanted_here and _text(child).strip():
                return [child]
    return children[-1:]


def _is_attachment(part: Message) -> bool:
    """Marked as an attachment, or a file that is not text sent with a name (some mailers mark
    an attached PDF `inline`). An inline image without a name is part of the layout."""
    disposition = part.get_content_disposition()
    if disposition == "attachment":
        return True
    return part.get_content_maintype() not in ("text", "multipart") and bool(part.get_filename())


def _text(part: Message) -> str:
    try:
        content = part.get_content() if isinstance(part, EmailMessage) else part.get_payload()
    except (LookupError, ValueError, AssertionError):  # an unknown charset, a broken encoding
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if not isinstance(content, str):
        return ""
    subtype = part.get_content_subtype()
    if subtype == "html":
        return html_text(content).text
    if subtype in ("enriched", "richtext"):
        return _TAGS.sub("", content)
    return content
