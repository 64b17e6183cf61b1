"""E-mail (RFC 822 / MIME, the standard library's parser): the main headers, then the body (the
plain-text part, else the HTML part as text), then the names of the attachments. The subject is
the title."""

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

from app.extract.errors import Unreadable
from app.extract.html import html_text
from app.extract.model import Extracted, Format, unpaged

HEADERS = ("From", "To", "Cc", "Date", "Subject")


def extract(path: Path) -> Extracted:
    with path.open("rb") as file:
        message = BytesParser(policy=policy.default).parse(file)
    if not isinstance(message, EmailMessage):  # policy.default builds EmailMessage objects
        raise Unreadable("the e-mail could not be parsed")
    lines = [f"{name}: {message[name]}" for name in HEADERS if message[name]]
    parts = ["\n".join(lines), _body(message)]
    attachments = [part.get_filename() for part in message.iter_attachments()]
    names = [name for name in attachments if name]
    if names:
        parts.append("Attachments: " + ", ".join(names))
    subject = message["Subject"]
    return unpaged(Format.EML, "\n\n".join(p for p in parts if p), str(subject or "") or None)


def _body(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError):  # an unknown charset or a broken transfer encoding
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if not isinstance(content, str):
        return ""
    if part.get_content_subtype() == "html":
        return html_text(content).text
    return content
