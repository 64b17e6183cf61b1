"""Rich Text Format (striprtf): the text of the document's groups, without the font and style
tables, pictures, embedded objects and field codes (a link keeps its text, then its address).
RTF has no fixed pages (a `\\page` is only a hard break), so the text is unpaged; the title is
the `{\\info{\\title ...}}` one. Binary payloads (`\\binN` and N raw bytes) are cut out before
the text is read: their bytes could hold braces and backslashes that would derail the groups."""

import re
from pathlib import Path

from striprtf.striprtf import rtf_to_text

from app.extract.model import Extracted, Format, unpaged

_BINARY = re.compile(rb"\\bin(-?\d{1,10}) ?")
_UNICODE = re.compile(rb"\\u(-?\d+)")
_TITLE = re.compile(rb"\{\\title[ ]?([^{}]*)\}")
SIGNATURE = b"{\\rtf"


def extract(path: Path) -> Extracted:
    raw = _without_binary(path.read_bytes())
    raw = _UNICODE.sub(_valid_unicode, raw)
    title = _TITLE.search(raw[:1_000_000])
    return unpaged(
        Format.RTF,
        _text(raw),
        _text(b"{\\rtf1 " + title.group(1) + b"}").strip() if title else None,
    )


def _text(raw: bytes) -> str:
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:  # RTF is 7-bit; stray 8-bit bytes are mostly Windows-1252
        decoded = raw.decode("cp1252", "replace")
    return rtf_text(decoded)


def rtf_text(rtf: str) -> str:
    """The text of an RTF document (also an Outlook item's RTF body)."""
    text: str = rtf_to_text(rtf, errors="replace")  # type: ignore[no-untyped-call]
    # Characters past U+FFFF come as two \\u surrogates: join them.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _without_binary(raw: bytes) -> bytes:
    """`raw` without its `\\binN` payloads (a negative or absurd N cuts the rest)."""
    if b"\\bin" not in raw:
        return raw
    parts, at = [], 0
    while (found := _BINARY.search(raw, at)) is not None:
        parts.append(raw[at : found.start()])
        length = int(found.group(1))
        at = found.end() + length if length >= 0 else len(raw)
    parts.append(raw[at:])
    return b"".join(parts)


def _valid_unicode(found: re.Match[bytes]) -> bytes:
    """`\\uN` with N a signed 16-bit value as RTF writes them; anything else (which would make no
    character) becomes a question mark."""
    value = int(found.group(1))
    return found.group(0) if -32768 <= value <= 65535 else b"?"
