"""Test files of the older and other formats, written by other code than their readers: EPUB by
EbookLib, Outlook .msg and compound files by aspose-email-foss, RTF, CSV and MIME mail written
here as their specifications describe them (the mail with the standard library's generator);
Word 97-2003 from the LibreOffice-made `tests/data/memo.doc`
(tests/fixtures/make_legacy_samples.py), varied by rewriting its streams."""

import io
import struct
import tempfile
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

from aspose.email_foss import cfb, msg  # type: ignore[import-untyped]
from ebooklib import epub  # type: ignore[import-untyped]

DATA = Path(__file__).parent.parent / "data"
MEMO_DOC = DATA / "memo.doc"


# --- Word 97-2003 ----------------------------------------------------------------------------


def doc_with(change: Callable[[bytearray], None], path: Path = MEMO_DOC) -> bytes:
    """`memo.doc` with its WordDocument stream changed in place by `change`."""
    document = cfb.CFBDocument.from_file(str(path))
    stream = next(child for child in document.root.children if child.name == "WordDocument")
    data = bytearray(stream.data)
    change(data)
    stream.data = bytes(data)
    written: bytes = cfb.CFBWriter.to_bytes(document)
    return written


def encrypted_doc() -> bytes:
    """Word's password protection as the FIB says it (fEncrypted, bit 8 of its flags)."""

    def encrypt(word: bytearray) -> None:
        (flags,) = struct.unpack_from("<H", word, 10)
        struct.pack_into("<H", word, 10, flags | 0x0100)

    return doc_with(encrypt)


def word95_doc() -> bytes:
    return doc_with(lambda word: struct.pack_into("<H", word, 2, 0x0068))


def doc_with_piece_table_outside() -> bytes:
    """The FIB points its piece table (fcClx) past the end of the table stream."""
    return doc_with(lambda word: struct.pack_into("<I", word, 418, 10**8))


def compound_file(streams: dict[str, bytes]) -> bytes:
    """A compound file holding `streams` (an Excel file holds a `Workbook`)."""
    root = cfb.CFBStorage("Root Entry")
    for name, data in streams.items():
        root.add_stream(cfb.CFBStream(name, data))
    written: bytes = cfb.CFBWriter.to_bytes(cfb.CFBDocument(root))
    return written


# --- RTF ---------------------------------------------------------------------------------------


def rtf_file(pages: list[str], title: str = "Harbour memo") -> bytes:
    """An RTF document as word processors write one: font, colour and style tables, document
    info, an embedded object whose binary payload holds braces and backslashes, a link field,
    Unicode escapes (one character past U+FFFF as two surrogates), pages split by `\\page`."""
    body = "\\page\n".join(
        f"{{\\pard\\plain\\f0\\fs24 {_rtf_escape(page)}\\par}}" for page in pages
    )
    return (
        "{\\rtf1\\ansi\\ansicpg1252\\deff0\n"
        "{\\fonttbl{\\f0\\froman\\fcharset0 Times New Roman;}{\\f1\\fswiss\\fcharset0 Arial;}}\n"
        "{\\colortbl;\\red0\\green0\\blue0;\\red255\\green0\\blue0;}\n"
        "{\\stylesheet{\\s0 Normal;}{\\s1 heading 1;}}\n"
        f"{{\\info{{\\title {_rtf_escape(title)}}}{{\\author Test Writer}}}}\n"
        "{\\pard\\s1\\b Overview\\b0\\par}\n"
        "{\\pard{\\object\\objemb{\\*\\objdata\\bin12 }{\\}\\par\\x}}}}\\par}\n"
        '{\\pard See {\\field{\\*\\fldinst{HYPERLINK "https://example.org/"}}'
        "{\\fldrslt{the harbour page}}}.\\par}\n"
        "{\\pard Gr\\'fc\\'dfe, \\u26481?\\u20140? and \\u-10179?\\u-8704? too.\\par}\n"
        f"{body}\n}}"
    ).encode("ascii")


def _rtf_escape(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("{", "\\{").replace("}", "\\}")
    return "".join(ch if ord(ch) < 128 else f"\\u{_signed16(ord(ch))}?" for ch in escaped)


def _signed16(code: int) -> int:
    return code - 0x10000 if code > 0x7FFF else code


# --- EPUB --------------------------------------------------------------------------------------


def epub_file(chapters: list[str], title: str = "The harbour book") -> bytes:
    """An EPUB 3 written by EbookLib: one XHTML document per chapter, in spine order."""
    book = epub.EpubBook()
    book.set_identifier("urn:uuid:4f0c9d38-2f8d-4bd3-8c2b-1a1f4c0e7a11")
    book.set_title(title)
    book.set_language("en")
    items = []
    for number, text in enumerate(chapters, 1):
        item = epub.EpubHtml(title=f"Chapter {number}", file_name=f"text/ch{number}.xhtml")
        item.content = f"<h1>Chapter {number}</h1><p>{text}</p>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = items
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "book.epub"
        epub.write_epub(str(path), book)
        return path.read_bytes()


def epub_with(changes: dict[str, bytes | None], chapters: list[str] | None = None) -> bytes:
    """An EbookLib EPUB with members replaced, added or (None) removed."""
    source = zipfile.ZipFile(io.BytesIO(epub_file(chapters or ["One.", "Two.", "Three."])))
    buffer = io.BytesIO()
    with source, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            if name not in changes:
                target.writestr(name, source.read(name))
        for name, data in changes.items():
            if data is not None:
                target.writestr(name, data)
    return buffer.getvalue()


def epub_members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


# --- Outlook .msg ------------------------------------------------------------------------------


def msg_file(
    subject: str,
    body: str,
    attachments: list[tuple[str, bytes, str]] | None = None,
    attached_items: list["msg.MapiMessage"] | None = None,
    message_class: str | None = None,
) -> bytes:
    """An Outlook message written by aspose-email-foss: sender, recipient, delivery time,
    attachments (name, bytes, MIME type) and attached Outlook items."""
    message = msg_item(subject, body)
    if message_class is not None:
        message.set_property(msg.PropertyId.MESSAGE_CLASS, message_class)
    for name, data, mime_type in attachments or []:
        message.add_attachment(name, data, mime_type=mime_type)
    for item in attached_items or []:
        message.add_embedded_message_attachment(item, filename=f"{item.subject}.msg")
    written: bytes = message.to_bytes()
    return written


def msg_with_rtf_body(subject: str, rtf: bytes) -> bytes:
    """An Outlook message whose only body is compressed RTF (PR_RTF_COMPRESSED, as Outlook
    keeps a rich-text message), no plain text or HTML beside it."""
    import compressed_rtf  # type: ignore[import-untyped]  # extract-msg's: Outlook's compression

    message = msg.MapiMessage.create(subject, "")
    message.set_property(0x1009, msg.PropertyTypeCode.PTYP_BINARY, compressed_rtf.compress(rtf))
    written: bytes = message.to_bytes()
    return written


def msg_item(subject: str, body: str) -> "msg.MapiMessage":
    message = msg.MapiMessage.create(subject, body)
    message.set_property(msg.PropertyId.SENDER_NAME, "Alice Example")
    message.set_property(msg.PropertyId.SENDER_EMAIL_ADDRESS, "alice@example.org")
    message.set_property(
        msg.PropertyId.MESSAGE_DELIVERY_TIME, datetime(2026, 5, 4, 10, 0, tzinfo=UTC)
    )
    message.add_recipient("bob@example.org", display_name="Bob Example")
    return message


# --- MIME mail ---------------------------------------------------------------------------------


def mail(subject: str, body: str = "", sender: str = "alice@example.org") -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "bob@example.org"
    message["Subject"] = subject
    message["Date"] = "Mon, 04 May 2026 10:00:00 +0000"
    if body:
        message.set_content(body)
    return message
