"""The older and other formats' readers on real files (.doc, .rtf, .epub, .msg, .csv / .tsv):
found by their content whatever they are called, their text in order, their pages where they
have them, and the hostile cases of each kind: damaged, encrypted where the format has it, bombs
for the zipped ones, and what each format's parser could be led astray by."""

import struct
import time
from pathlib import Path

import pytest

from app.extract.archive import ArchiveLimits
from app.extract.errors import Encrypted, TooLarge, Unreadable, UnsupportedFormat
from app.extract.model import Extracted, Format
from app.extract.reader import read_file
from tests.extract import legacy_samples as legacy

DATA = legacy.DATA
LIGHTHOUSE = "The lighthouse keeper logged a northern gale and a broken lantern."
CHAPTERS = [
    "Quarterly revenue grew in every region of the company.",
    "The kitchen menu changes with the seasons and the market.",
    LIGHTHOUSE,
    "Bicycle lanes were painted along the river last spring.",
]


def read(tmp_path: Path, data: bytes, name: str = "upload", **limits: int) -> Extracted:
    path = tmp_path / "file"
    path.write_bytes(data)
    return read_file(path, ArchiveLimits(**limits), name)


def page(extracted: Extracted, number: int) -> str:
    starts = [*extracted.page_starts, len(extracted.text)]
    return extracted.text[starts[number - 1] : starts[number]].strip()


def flat(text: str) -> str:
    return " ".join(text.split())


# --- Word 97-2003 ----------------------------------------------------------------------------


def test_a_word_97_file_from_libreoffice_reads_in_order(tmp_path: Path) -> None:
    extracted = read(tmp_path, (DATA / "memo.doc").read_bytes(), "upload")
    assert extracted.format is Format.DOC and extracted.page_starts == ()
    assert extracted.title == "Harbour memo"
    assert extracted.mime_type == "application/msword"
    lines = extracted.text.splitlines()
    headed = [lines.index(f"Chapter {n}") for n in range(1, 5)]
    assert headed == sorted(headed)
    assert lines[headed[2] + 1] == LIGHTHOUSE
    # The link's shown text stays, its field code goes; UTF-16 pieces decode; rows are lines.
    assert "the seasonal menu" in extracted.text and "HYPERLINK" not in extracted.text
    assert "Grüße aus Köln — naïve café, 東京." in lines
    assert "north | south" in lines and "east | west" in lines
    # The footnote story after the main text; no Word control characters left.
    assert extracted.text.rstrip().endswith("A footnote about the foghorn.")
    assert not any(ch in extracted.text for ch in "\x07\x13\x14\x15\x01\x02")


@pytest.mark.parametrize(
    ("make", "error", "says"),
    [
        (legacy.encrypted_doc, Encrypted, "password"),
        (legacy.word95_doc, UnsupportedFormat, "Word 95"),
        (legacy.doc_with_piece_table_outside, Unreadable, "piece table"),
        (lambda: (DATA / "memo.doc").read_bytes()[:3000], Unreadable, "compound"),
        (lambda: legacy.compound_file({"Workbook": bytes(5000)}), UnsupportedFormat, ".xls"),
        (lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), Unreadable, "compound"),
    ],
    ids=["encrypted", "word 95", "piece table outside", "truncated", "excel", "header only"],
)  # fmt: skip
def test_hostile_word_files_are_refused_with_their_reason(
    tmp_path: Path, make: object, error: type[Exception], says: str
) -> None:
    assert callable(make)
    with pytest.raises(error, match=says):
        read(tmp_path, make(), "memo.doc")


def test_a_word_file_with_negative_character_counts_is_damaged(tmp_path: Path) -> None:
    def backwards(word: bytearray) -> None:
        (text_length,) = struct.unpack_from("<i", word, 76)
        struct.pack_into("<i", word, 76, -text_length)

    with pytest.raises(Unreadable, match="negative"):
        read(tmp_path, legacy.doc_with(backwards))


# --- RTF ---------------------------------------------------------------------------------------


def test_rtf_gives_its_text_without_tables_pictures_or_field_codes(tmp_path: Path) -> None:
    data = legacy.rtf_file(["Page one text.", "Page two text.", LIGHTHOUSE])
    extracted = read(tmp_path, data)
    assert extracted.format is Format.RTF and extracted.title == "Harbour memo"
    text = extracted.text
    assert text.startswith("Overview")
    assert flat(text).index("Page one text.") < flat(text).index(LIGHTHOUSE)
    assert "the harbour page" in text and "fldinst" not in text
    assert "Grüße, 東京 and 😀 too." in text  # \'xx, \uN and a surrogate pair
    for table_word in ("Times New Roman", "Normal;", "red255", "Test Writer", "\\par"):
        assert table_word not in text
    # The object's binary payload (braces, backslashes) is skipped without derailing the rest.
    assert "\\x" not in text and "{" not in text


def test_rtf_from_libreoffice(tmp_path: Path) -> None:
    extracted = read(tmp_path, (DATA / "memo.rtf").read_bytes(), "memo.txt")  # name misleads
    assert extracted.format is Format.RTF and extracted.title == "Harbour memo"
    assert LIGHTHOUSE in extracted.text and "Grüße aus Köln" in extracted.text
    assert "Liberation Serif" not in extracted.text


def test_hostile_rtf_is_read_within_bounds(tmp_path: Path) -> None:
    """Groups nested 100,000 deep, a \\bin claiming more bytes than there are, absurd
    \\u values, a truncated file: each gives what text there is, and quickly."""
    deep = b"{\\rtf1 " + b"{" * 100_000 + b"deep text" + b"}" * 100_000 + b" after}"
    started = time.monotonic()
    assert read(tmp_path, deep).text == "deep text after"
    assert time.monotonic() - started < 10
    claims = b"{\\rtf1 before \\bin999999999 after}"
    assert read(tmp_path, claims).text == "before"
    absurd = b"{\\rtf1 x\\u99999999999 y\\u-99999 z}"
    assert read(tmp_path, absurd).text.replace("?", "") == "x y z"
    cut = legacy.rtf_file(["Page one text.", LIGHTHOUSE])[:-40]
    assert "Page one text." in read(tmp_path, cut).text


# --- EPUB --------------------------------------------------------------------------------------


def test_each_epub_chapter_is_a_page_in_spine_order(tmp_path: Path) -> None:
    extracted = read(tmp_path, legacy.epub_file(CHAPTERS), "book.zip")
    assert extracted.format is Format.EPUB and extracted.page_count == 4
    assert extracted.title == "The harbour book" and extracted.sealed
    for number, sentence in enumerate(CHAPTERS, 1):
        assert page(extracted, number) == f"Chapter {number}\n\n{sentence}"


def test_an_epub_from_libreoffice_follows_its_spine_not_its_manifest(tmp_path: Path) -> None:
    """libepubgen lists chapter 3 first in the manifest; the spine gives the reading order."""
    data = (DATA / "memo.epub").read_bytes()
    manifest = legacy.epub_members(data)["OEBPS/content.opf"].decode()
    assert manifest.index("section0003") < manifest.index("section0001")
    extracted = read(tmp_path, data)
    assert extracted.page_count == 4 and extracted.title == "Harbour memo"
    assert page(extracted, 3).startswith("Chapter 3") and LIGHTHOUSE in page(extracted, 3)
    assert "foghorn" in page(extracted, 3)  # the footnote stays in its chapter
    assert LIGHTHOUSE not in page(extracted, 2) + page(extracted, 4)


def test_an_epub_chapter_missing_or_not_text_keeps_its_page_number(tmp_path: Path) -> None:
    members = legacy.epub_members(legacy.epub_file(CHAPTERS))
    opf_name = next(name for name in members if name.endswith(".opf"))
    opf = members[opf_name].replace(
        b'media-type="application/xhtml+xml"', b'media-type="image/png"', 1
    )
    data = legacy.epub_with({opf_name: opf, "EPUB/text/ch2.xhtml": None}, CHAPTERS)
    extracted = read(tmp_path, data)
    assert extracted.page_count == 4
    assert LIGHTHOUSE in page(extracted, 3)


ENCRYPTION = b"""<?xml version="1.0"?>
<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
            xmlns:enc="http://www.w3.org/2001/04/xmlenc#">
  <enc:EncryptedData>
    <enc:EncryptionMethod Algorithm="%s"/>
    <enc:CipherData><enc:CipherReference URI="%s"/></enc:CipherData>
  </enc:EncryptedData>
</encryption>"""
BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE container [
  <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
  <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
  <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
  <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
  <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
  <!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">
]>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="EPUB/content.opf&f;" media-type="application/oebps-package+xml"/>
</rootfiles></container>"""


def test_an_epub_with_drm_is_encrypted_and_obfuscated_fonts_are_not(tmp_path: Path) -> None:
    drm = ENCRYPTION % (b"http://www.w3.org/2001/04/xmlenc#aes128-cbc", b"EPUB/text/ch2.xhtml")
    with pytest.raises(Encrypted, match="DRM"):
        read(tmp_path, legacy.epub_with({"META-INF/encryption.xml": drm}))
    fonts = ENCRYPTION % (b"http://www.idpf.org/2008/embedding", b"EPUB/text/ch2.xhtml")
    assert "Two." in read(tmp_path, legacy.epub_with({"META-INF/encryption.xml": fonts})).text


@pytest.mark.parametrize(
    ("changes", "error", "says"),
    [
        ({"META-INF/container.xml": b"<container><not-closed"}, Unreadable, "container.xml"),
        ({"META-INF/container.xml": BILLION_LAUGHS}, Unreadable, "EPUB"),
        ({"EPUB/content.opf": None}, Unreadable, "content.opf"),
        ({"EPUB/content.opf": b'<package xmlns="http://www.idpf.org/2007/opf"/>'}, Unreadable,
         "spine"),
        ({"bomb.bin": bytes(3 * 2**20)}, TooLarge, "expands to"),
    ],
    ids=["damaged container", "billion laughs", "no package", "empty spine", "zip bomb"],
)  # fmt: skip
def test_hostile_epubs_are_refused(
    tmp_path: Path, changes: dict[str, bytes | None], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        read(tmp_path, legacy.epub_with(changes), max_bytes=2**20)


def test_an_entity_bomb_in_a_chapter_is_never_expanded(tmp_path: Path) -> None:
    entities = "".join(
        f'<!ENTITY {name} "{("&" + previous + ";") * 20}">'
        for previous, name in zip("abcdef", "bcdefg", strict=True)
    )
    chapter = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<!DOCTYPE html [<!ENTITY a "aaaaaaaaaa">{entities}]>'
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Before &g; after.</p></body></html>'
    ).encode()
    extracted = read(tmp_path, legacy.epub_with({"EPUB/text/ch1.xhtml": chapter}))
    assert "Before" in page(extracted, 1) and "after." in page(extracted, 1)
    assert "aaaaaaaaaa" not in extracted.text and len(extracted.text) < 10_000


def test_epub_chapters_never_resolve_outside_the_archive(tmp_path: Path) -> None:
    members = legacy.epub_members(legacy.epub_file(CHAPTERS))
    opf = members["EPUB/content.opf"].replace(
        b'href="text/ch1.xhtml"', b'href="../../../etc/passwd"'
    )
    extracted = read(tmp_path, legacy.epub_with({"EPUB/content.opf": opf}, CHAPTERS))
    assert page(extracted, 1) == "" and "root:" not in extracted.text


# --- CSV / TSV ---------------------------------------------------------------------------------

TABLE = [
    ["city", "harbour master", "notes"],
    ["Kiel", "Ada Brandt", "storm damage to the north pier"],
    ["Porto", "", "new crane, 42 tonnes"],
    ["Lerwick", "Magnus Tait", LIGHTHOUSE],
]


def delimited(rows: list[list[str]], delimiter: str) -> bytes:
    import csv
    import io

    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue().encode()


@pytest.mark.parametrize(
    ("delimiter", "name", "format"),
    [
        (",", "ports.csv", Format.CSV),
        ("\t", "ports.tsv", Format.TSV),
        (";", "upload", Format.CSV),
        ("\t", "upload", Format.TSV),
        ("|", "ports.csv", Format.CSV),
    ],
)
def test_each_row_is_a_paragraph_labelled_by_the_header(
    tmp_path: Path, delimiter: str, name: str, format: Format
) -> None:
    extracted = read(tmp_path, delimited(TABLE, delimiter), name)
    assert extracted.format is format and extracted.page_starts == ()
    assert extracted.text.split("\n\n") == [
        "city: Kiel; harbour master: Ada Brandt; notes: storm damage to the north pier",
        "city: Porto; notes: new crane, 42 tonnes",  # the empty cell is left out
        f"city: Lerwick; harbour master: Magnus Tait; notes: {LIGHTHOUSE}",
    ]


def test_a_table_without_a_header_gives_its_cells(tmp_path: Path) -> None:
    rows = [["2026-05-01", "12", "Kiel"], ["2026-05-02", "14", "Porto"], ["2026-05-03", "9", "x"]]
    extracted = read(tmp_path, delimited(rows, ","), "readings.csv")
    assert extracted.text.split("\n\n") == [
        "2026-05-01 | 12 | Kiel",
        "2026-05-02 | 14 | Porto",
        "2026-05-03 | 9 | x",
    ]


def test_quoted_fields_keep_their_delimiters_and_line_breaks(tmp_path: Path) -> None:
    data = b'name,remark\n"Brandt, Ada","two\nlines"\nTait,plain\n'
    extracted = read(tmp_path, data, "people.csv")
    assert extracted.text.split("\n\n") == [
        "name: Brandt, Ada; remark: two lines",
        "name: Tait; remark: plain",
    ]


def test_prose_with_commas_stays_text(tmp_path: Path) -> None:
    prose = b"Dear Bob,\nthe pier, the crane and the lantern are fine.\nRegards, Ada\n"
    assert read(tmp_path, prose, "upload").format is Format.TEXT
    assert read(tmp_path, delimited(TABLE, ","), "ports.txt").format is Format.TEXT
    markdown_table = b"| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |\n| 4 | 5 | 6 |\n"
    assert read(tmp_path, markdown_table, "upload").format is not Format.CSV


def test_a_table_past_its_bounds_is_refused(tmp_path: Path) -> None:
    """The labels multiply the text: a long header over many short rows is bounded by what a
    file may expand to; a field past the csv module's limit is a damaged file."""
    header = [f"a rather long column name number {n}" for n in range(20)]
    rows = [header] + [[str(n % 10)] * 20 for n in range(2000)]
    data = delimited(rows, ",")
    with pytest.raises(TooLarge, match="expand"):
        read(tmp_path, data, "wide.csv", max_bytes=len(data) * 5)
    assert read(tmp_path, data, "wide.csv").text.count("\n\n") == 1999
    huge_field = b"a,b\n" + b"x," + b"y" * 200_000 + b"\n"
    with pytest.raises(Unreadable, match="field larger"):
        read(tmp_path, huge_field, "big.csv")


# --- Outlook .msg ------------------------------------------------------------------------------


def test_an_outlook_message_gives_headers_body_and_title(tmp_path: Path) -> None:
    data = legacy.msg_file("Harbour report", f"Body first.\n\n{LIGHTHOUSE}\n")
    extracted = read(tmp_path, data, "report.eml")  # the content decides
    assert extracted.format is Format.MSG and extracted.title == "Harbour report"
    assert extracted.mime_type == "application/vnd.ms-outlook"
    lines = extracted.text.splitlines()
    assert lines[:4] == [
        "From: Alice Example",
        "To: Bob Example <bob@example.org>",
        "Date: Mon, 04 May 2026 10:00:00 +0000",
        "Subject: Harbour report",
    ]
    assert flat(extracted.text).endswith(f"Body first. {LIGHTHOUSE}")


def test_an_outlook_message_with_only_an_rtf_body(tmp_path: Path) -> None:
    rtf = b"{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Arial;}}\\pard The pilot boat left at dawn.\\par}"
    extracted = read(tmp_path, legacy.msg_with_rtf_body("Rich text", rtf))
    assert extracted.text.splitlines()[-1] == "The pilot boat left at dawn."
    assert "Arial" not in extracted.text


def test_an_encrypted_or_damaged_outlook_message_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Encrypted, match="S/MIME"):
        read(tmp_path, legacy.msg_file("Secret", "x", message_class="IPM.Note.SMIME"))
    whole = legacy.msg_file("Harbour report", "Body.")
    with pytest.raises(Unreadable):
        read(tmp_path, whole[: len(whole) // 3])


def test_the_committed_samples_are_sniffed_by_content_whatever_their_name(tmp_path: Path) -> None:
    for name, format in (("memo.doc", Format.DOC), ("memo.rtf", Format.RTF)):
        assert read(tmp_path, (DATA / name).read_bytes(), "x.pdf").format is format
    assert read(tmp_path, (DATA / "memo.epub").read_bytes(), "x.docx").format is Format.EPUB
