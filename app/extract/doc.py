"""Word 97-2003 (.doc), read with olefile as [MS-DOC] 2.4.1 ("Retrieving Text") describes: the
File Information Block at the head of the WordDocument stream says which table stream holds the
piece table (the CLX), and the pieces say where each run of characters lies in WordDocument
(8-bit cp1252 or UTF-16). Fast-saved ("complex") files read the same way. The main text, then the
footnotes, comments, endnotes and text boxes; headers and footers left out. Field codes (the
`HYPERLINK "..."` of a link) are dropped and their shown result kept. Word files have no fixed
pages, so the text is unpaged, as for .docx. The title is the summary information's."""

import re
import struct
from pathlib import Path

import olefile

from app.extract.errors import Encrypted, Unreadable, UnsupportedFormat
from app.extract.model import Extracted, Format, unpaged

_WORD_IDENT = 0xA5EC
_FIRST_WORD97_NFIB = 0x00C0  # Word 6 and 95 (nFib 0x65-0x68) wrote another layout
_F_COMPLEX, _F_ENCRYPTED, _F_WHICH_TABLE, _F_OBFUSCATED = 0x0004, 0x0100, 0x0200, 0x8000
_CCP_OFFSET = 76  # FibRgLw97: ccpText, ccpFtn, ccpHdd, ccpMcr, ccpAtn, ccpEdn, ccpTxbx, ccpHdrTxbx
_CLX_OFFSET = 154 + 33 * 8  # FibRgFcLcb97: the 34th (fc, lcb) pair is fcClx / lcbClx
_MAX_PIECES = 1_000_000
# Which stories are indexed, by their place among the ccp counts: main text, footnotes,
# comments, endnotes, text boxes (not headers, macros, header text boxes).
_STORIES = (True, True, False, False, True, True, True, False)

# Word's special characters ([MS-DOC] 2.8.26 and the text's structure marks).
_FIELD_BEGIN, _FIELD_SEPARATOR, _FIELD_END = "\x13", "\x14", "\x15"
_CELL = "\x1d"  # a table cell's end while the text is put together
_BLANKS = re.compile(r"\n{3,}")
_TRANSLATE = str.maketrans(
    {
        "\r": "\n",  # paragraph end
        "\x07": _CELL,  # table cell end (a row ends with one too: made a line end below)
        "\x0b": "\n",  # line break
        "\x0c": "\n\n",  # page or section break
        "\x0e": "\n",  # column break
        "\x1e": "-",  # non-breaking hyphen
        "\x1f": "",  # optional hyphen
        "\xa0": " ",
        "\x01": "",  # picture
        "\x02": "",  # footnote mark
        "\x05": "",  # comment mark
        "\x08": "",  # drawn object
    }
)


def extract(path: Path) -> Extracted:
    try:
        ole = olefile.OleFileIO(str(path))
    except (OSError, ValueError, struct.error) as exc:
        raise Unreadable(f"the Word file is a damaged compound file: {exc}") from exc
    with ole:
        if not ole.exists("WordDocument"):
            raise Unreadable("the compound file holds no WordDocument stream")
        word = ole.openstream("WordDocument").read()
        flags = _fib(word)
        table_name = "1Table" if flags & _F_WHICH_TABLE else "0Table"
        if not ole.exists(table_name):
            raise Unreadable(f"the Word file has no {table_name} stream")
        table = ole.openstream(table_name).read()
        try:
            text = _text(word, table)
        except struct.error as exc:
            raise Unreadable(f"the Word file's tables are cut short: {exc}") from exc
        title = _title(ole)
    return unpaged(Format.DOC, text, title)


def _fib(word: bytes) -> int:
    """The FibBase's flags, once the stream is known to be a Word 97-2003 document in clear."""
    if len(word) < _CLX_OFFSET + 8:
        raise Unreadable("the Word file's File Information Block is cut short")
    ident, nfib = struct.unpack_from("<HH", word, 0)
    (flags,) = struct.unpack_from("<H", word, 10)
    if ident != _WORD_IDENT:
        raise Unreadable("the WordDocument stream does not start with a Word header")
    if flags & (_F_ENCRYPTED | _F_OBFUSCATED):
        raise Encrypted("the Word file is password-protected: send it without a password")
    if nfib < _FIRST_WORD97_NFIB:
        raise UnsupportedFormat(
            "Word 6 and Word 95 files are not supported: save the file as .docx or .odt"
        )
    return int(flags)


def _text(word: bytes, table: bytes) -> str:
    counts = struct.unpack_from("<8i", word, _CCP_OFFSET)
    if any(count < 0 for count in counts):
        raise Unreadable("the Word file's character counts are negative")
    fc_clx, lcb_clx = struct.unpack_from("<II", word, _CLX_OFFSET)
    pieces = _pieces(table, fc_clx, lcb_clx)
    whole = "".join(_piece_text(word, piece) for piece in pieces)
    # The stories follow each other in the character positions: keep the indexed ones.
    parts, position = [], 0
    for count, kept in zip(counts, _STORIES, strict=True):
        if kept and count:
            parts.append(whole[position : position + count])
        position += count
    return "\n\n".join(_readable(part) for part in parts)


def _pieces(table: bytes, fc: int, lcb: int) -> list[tuple[int, int, int, bool]]:
    """The piece table: (first character, character count, byte offset, 8-bit) per piece."""
    clx = table[fc : fc + lcb]
    if len(clx) != lcb or not lcb:
        raise Unreadable("the Word file's piece table lies outside its table stream")
    at = 0
    while at < len(clx) and clx[at] == 0x01:  # Prc: formatting, skipped
        (size,) = struct.unpack_from("<h", clx, at + 1)
        at += 3 + max(size, 0)
    if at + 5 > len(clx) or clx[at] != 0x02:
        raise Unreadable("the Word file's piece table is damaged")
    (size,) = struct.unpack_from("<I", clx, at + 1)
    plc = clx[at + 5 : at + 5 + size]
    count = (len(plc) - 4) // 12
    if count < 1 or count > _MAX_PIECES or len(plc) < count * 12 + 4:
        raise Unreadable("the Word file's piece table is damaged")
    positions = struct.unpack_from(f"<{count + 1}i", plc, 0)
    pieces = []
    for index in range(count):
        (fc_value,) = struct.unpack_from("<I", plc, 4 * (count + 1) + 8 * index + 2)
        compressed = bool(fc_value & 0x40000000)
        offset = fc_value & 0x3FFFFFFF
        length = positions[index + 1] - positions[index]
        if length < 0:
            raise Unreadable("the Word file's piece table runs backwards")
        pieces.append((positions[index], length, offset // 2 if compressed else offset, compressed))
    return pieces


def _piece_text(word: bytes, piece: tuple[int, int, int, bool]) -> str:
    _, length, offset, compressed = piece
    size = length if compressed else 2 * length
    raw = word[offset : offset + size]
    if len(raw) != size:
        raise Unreadable("a piece of the Word file's text lies outside its stream")
    return raw.decode("cp1252", "replace") if compressed else raw.decode("utf-16-le", "replace")


def _readable(text: str) -> str:
    """Field codes dropped (their results kept), Word's marks made line ends and spaces."""
    out: list[str] = []
    depth = 0  # nesting of fields whose code (not result) is being read
    stack: list[bool] = []  # per open field: still in its code
    for char in text:
        if char == _FIELD_BEGIN:
            stack.append(True)
            depth += 1
        elif char == _FIELD_SEPARATOR:
            if stack and stack[-1]:
                stack[-1] = False
                depth -= 1
        elif char == _FIELD_END:
            if stack and stack.pop():
                depth -= 1
        elif depth == 0:
            out.append(char)
    rows_ended = "".join(out).replace("\x07\x07", "\n")  # a row's last cell, then its end mark
    lines = rows_ended.translate(_TRANSLATE).split("\n")
    text = "\n".join(line.rstrip(_CELL).replace(_CELL, " | ").rstrip() for line in lines)
    return _BLANKS.sub("\n\n", text).strip()


def _title(ole: "olefile.OleFileIO[str]") -> str | None:
    try:
        title = getattr(ole.get_metadata(), "title", None)  # set from the summary stream
    except Exception:  # a damaged summary stream costs the title only
        return None
    if isinstance(title, bytes):
        return title.decode("cp1252", "replace")
    return title if isinstance(title, str) else None
