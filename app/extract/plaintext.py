"""Plain text: decoded by its byte-order mark, else as UTF-8, else as Windows-1252 (what legacy
text files mostly are); a file with NUL bytes or many control characters is not text."""

import codecs
from pathlib import Path

from app.extract.errors import UnsupportedFormat
from app.extract.model import Extracted, Format, unpaged

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_CONTROL = frozenset(range(0x20)) - {0x09, 0x0A, 0x0C, 0x0D, 0x1B}


def decode(raw: bytes, partial: bool = False) -> str | None:
    """The text, or None when the bytes are not text. `partial`: `raw` is the head of a file and
    may end inside a character."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            return raw[len(bom) :].decode(encoding, "replace")
    if b"\x00" in raw:
        return None
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(raw, final=not partial)
    except UnicodeDecodeError:
        pass
    if sum(byte in _CONTROL for byte in raw) > len(raw) // 20:
        return None
    return raw.decode("cp1252", "replace")


def read_text(path: Path) -> str:
    text = decode(path.read_bytes())
    if text is None:
        raise UnsupportedFormat("the file is not text")
    return text


def extract(path: Path) -> Extracted:
    return unpaged(Format.TEXT, read_text(path))
