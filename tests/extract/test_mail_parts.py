"""Every part of a mail: each inline text part in order (7bit, quoted-printable, base64; the
plain text of an alternative, not its HTML twin), forwarded messages and digests under their
subjects, lines that look like boundaries kept as text; then the attachments (EML and MSG), read
through the same dispatch as any file within the mail's bounds, a damaged one skipped. The
mails are written here (the standard library's generator, or by hand where the shape matters:
a digest's parts without headers, a body line that mimics a boundary)."""

import io
import zipfile
from email.message import EmailMessage
from pathlib import Path

import pytest

from app.extract.archive import ArchiveLimits
from app.extract.attachments import MAX_DEPTH
from app.extract.errors import Encrypted
from app.extract.model import Extracted, Format
from app.extract.reader import read_file
from tests.extract import legacy_samples as legacy
from tests.extract import samples

FIVE = [
    "Part one travels as plain seven-bit text about the tide tables.",
    "Part two is quoted-printable: Grüße from Köln, with a line long enough to be folded by "
    "the encoder before it reaches the end of its seventy-six characters.",
    "Part three is base64 and mentions the broken lantern.",
    "Part four is the plain alternative about the ferry timetable.",
    "Part five is an inline HTML note about the harbour crane.",
]
HTML_TWIN = "The HTML twin of part four should not be indexed twice."


def read(tmp_path: Path, data: bytes, name: str = "upload", **limits: int) -> Extracted:
    path = tmp_path / "mail"
    path.write_bytes(data)
    return read_file(path, ArchiveLimits(**limits), name)


def flat(text: str) -> str:
    return " ".join(text.split())


def text_part(text: str, cte: str, subtype: str = "plain") -> EmailMessage:
    part = EmailMessage()
    part.set_content(text, subtype=subtype, cte=cte)
    return part


def five_part_mail() -> bytes:
    message = legacy.mail("Five parts")
    message.set_content(FIVE[0], cte="7bit")
    message.make_mixed()
    message.attach(text_part(FIVE[1], "quoted-printable"))
    message.attach(text_part(FIVE[2], "base64"))
    alternative = EmailMessage()
    alternative.set_content(FIVE[3], cte="quoted-printable")
    alternative.add_alternative(f"<p>{HTML_TWIN}</p>", subtype="html", cte="base64")
    message.attach(alternative)
    html = text_part(f"<html><body><p>{FIVE[4]}</p></body></html>", "base64", "html")
    html["Content-Disposition"] = "inline"
    message.attach(html)
    return bytes(message)


def test_every_inline_text_part_is_kept_in_order(tmp_path: Path) -> None:
    data = five_part_mail()
    for encoding in (b"7bit", b"quoted-printable", b"base64"):
        assert b"Content-Transfer-Encoding: " + encoding in data
    extracted = read(tmp_path, data)
    text = flat(extracted.text)
    positions = [text.index(sentence) for sentence in FIVE]
    assert positions == sorted(positions)
    assert HTML_TWIN not in text and "<p>" not in text
    assert extracted.title == "Five parts" and extracted.format is Format.EML


def test_an_empty_plain_alternative_gives_way_to_the_html(tmp_path: Path) -> None:
    message = legacy.mail("Only HTML says it")
    message.set_content(" \n")
    message.add_alternative(f"<p>{HTML_TWIN}</p>", subtype="html")
    assert HTML_TWIN in read(tmp_path, bytes(message)).text


DIGEST_SUBJECTS = [
    "Tide tables for May",
    "Crane inspection moved",
    "Lost: one lantern",
    "Ferry strike on Friday",
    "Minutes of the harbour board",
]


def digest() -> bytes:
    """A mailing list digest as RFC 2046 has it: its parts carry no headers of their own (the
    default type in a multipart/digest is message/rfc822), only the messages'."""
    parts = "".join(
        f"--digest-7\n\nFrom: member{n}@example.org\nSubject: {subject}\n"
        f"Date: Mon, 0{n} May 2026 08:00:00 +0000\n\nMessage {n} of the digest: {subject.lower()}"
        " was discussed at length.\n\n"
        for n, subject in enumerate(DIGEST_SUBJECTS, 1)
    )
    return (
        "From: harbour-list@example.org\nTo: bob@example.org\n"
        "Subject: Harbour list digest, Vol 3, Issue 5\nDate: Sat, 09 May 2026 08:00:00 +0000\n"
        'MIME-Version: 1.0\nContent-Type: multipart/digest; boundary="digest-7"\n\n'
        f"This preamble is not shown by mail readers.\n\n{parts}--digest-7--\n"
    ).encode()


def test_a_digest_gives_each_message_under_its_subject(tmp_path: Path) -> None:
    extracted = read(tmp_path, digest())
    text = extracted.text
    headings = [text.index(f"Forwarded message: {subject}\n") for subject in DIGEST_SUBJECTS]
    assert headings == sorted(headings)
    for n, subject in enumerate(DIGEST_SUBJECTS, 1):
        body = text.index(f"Message {n} of the digest: {subject.lower()}")
        following = headings[n] if n < len(headings) else len(text)
        assert headings[n - 1] < body < following
        assert f"From: member{n}@example.org" in text
    assert "preamble" not in text
    assert extracted.title == "Harbour list digest, Vol 3, Issue 5"


def test_a_forwarded_message_is_read_under_its_subject(tmp_path: Path) -> None:
    inner = legacy.mail("Original report", "The original text about the pier.", "carol@x.org")
    outer = legacy.mail("Fwd: Original report", "See below.")
    outer.add_attachment(inner)  # message/rfc822, as mail programs forward
    text = read(tmp_path, bytes(outer)).text
    assert flat(text).endswith(
        "See below. Forwarded message: Original report From: carol@x.org To: bob@example.org"
        " Date: Mon, 04 May 2026 10:00:00 +0000 The original text about the pier."
    )


BOUNDARY_LIKE = (
    "MIME-Version: 1.0\nSubject: Boundaries\nFrom: a@example.org\nTo: b@example.org\n"
    'Content-Type: multipart/mixed; boundary="real-boundary-42"\n\n'
    "--real-boundary-42\nContent-Type: text/plain; charset=utf-8\n\n"
    "Before the look-alike lines.\n--boundary\n"
    "--real-boundary-42 is how the parts of this mail are separated.\n"
    "--real-boundary-42x\n"
    "After the look-alike lines, still the first part.\n"
    "--real-boundary-42\nContent-Type: text/plain; charset=utf-8\n\n"
    "The second part.\n--real-boundary-42--\n"
)


def test_lines_that_look_like_boundaries_stay_text(tmp_path: Path) -> None:
    lines = read(tmp_path, BOUNDARY_LIKE.encode()).text.splitlines()
    start = lines.index("Before the look-alike lines.")
    assert lines[start : start + 5] == [
        "Before the look-alike lines.",
        "--boundary",
        "--real-boundary-42 is how the parts of this mail are separated.",
        "--real-boundary-42x",
        "After the look-alike lines, still the first part.",
    ]
    assert lines[-1] == "The second part."


def test_an_encrypted_mail_is_refused(tmp_path: Path) -> None:
    message = legacy.mail("Secret")
    message.set_content(
        b"\x30\x80 encrypted bytes",
        maintype="application",
        subtype="pkcs7-mime",
        params={"smime-type": "enveloped-data", "name": "smime.p7m"},
    )
    with pytest.raises(Encrypted, match="encrypted"):
        read(tmp_path, bytes(message))
    pgp = legacy.mail("Secret too")
    pgp.set_content("-----BEGIN PGP MESSAGE-----\nxyz\n", subtype="plain")
    pgp.make_mixed()
    pgp.set_type("multipart/encrypted")
    with pytest.raises(Encrypted):
        read(tmp_path, bytes(pgp))


# --- attachments -------------------------------------------------------------------------------

PDF_PAGES = ["First page of the attachment.", "Second page.", "The attached crane manual."]


def with_attachments(*files: tuple[str, bytes, str, str]) -> bytes:
    message = legacy.mail("Papers for the board", "The papers are attached.")
    for name, data, maintype, subtype in files:
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return bytes(message)


def test_attachments_are_read_after_the_body_under_their_names(tmp_path: Path) -> None:
    inner = legacy.mail("Minutes", "Minutes of the meeting about the lantern.")
    data = with_attachments(
        ("manual.pdf", samples.pdf(PDF_PAGES), "application", "pdf"),
        ("memo.docx", samples.docx_file(["A memo about the ferry."]), "application", "msword"),
        ("ports.csv", b"city,master\nKiel,Ada\nPorto,Rui\n", "text", "csv"),
        ("minutes.eml", bytes(inner), "application", "octet-stream"),
        ("broken.pdf", samples.pdf(PDF_PAGES)[:400], "application", "pdf"),
        ("photo.raw", bytes(range(256)) * 4, "application", "octet-stream"),
    )
    text = read(tmp_path, data).text
    body = text.index("The papers are attached.")
    assert (
        "Attachments: manual.pdf, memo.docx, ports.csv, minutes.eml, broken.pdf, photo.raw" in text
    )
    headings = [
        text.index(f"Attachment: {name}\n")
        for name in ("manual.pdf", "memo.docx", "ports.csv", "minutes.eml")
    ]
    assert body < headings[0] and headings == sorted(headings)
    assert text.index("The attached crane manual.") > headings[0]
    assert text.index("A memo about the ferry.") > headings[1]
    assert "city: Porto; master: Rui" in text
    assert text.index("Minutes of the meeting about the lantern.") > headings[3]
    # Damaged and unsupported attachments are skipped: named, not read, the mail still is.
    assert "Attachment: broken.pdf" not in text and "Attachment: photo.raw" not in text


def test_attachments_count_against_the_mails_bounds(tmp_path: Path) -> None:
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"<w:document/>")
        archive.writestr("bomb.bin", bytes(3 * 2**20))
    first = samples.docx_file(["The first memo fits."])
    second = samples.docx_file(["The second memo does not."])
    data = with_attachments(
        ("bomb.docx", bomb.getvalue(), "application", "octet-stream"),
        ("first.docx", first, "application", "octet-stream"),
        ("second.docx", second, "application", "octet-stream"),
    )
    expanded = sum(i.file_size for i in zipfile.ZipFile(io.BytesIO(first)).infolist())
    limit = int(1.5 * (expanded + len(first)))  # room for one memo, not two, nor the bomb
    text = read(tmp_path, data, max_bytes=limit).text
    assert "The papers are attached." in text
    assert "The first memo fits." in text
    assert "The second memo does not." not in text and "Attachment: bomb.docx" not in text
    assert "Attachments: bomb.docx, first.docx, second.docx" in text


def test_mails_attached_to_mails_are_read_to_a_bounded_depth(tmp_path: Path) -> None:
    data = bytes(legacy.mail("Level 6", "Text of level six."))
    for level in range(5, -1, -1):
        message = legacy.mail(f"Level {level}", f"Text of level {level}.")
        message.add_attachment(data, "application", "octet-stream", filename=f"l{level + 1}.eml")
        data = bytes(message)
    text = read(tmp_path, data).text
    for level in range(MAX_DEPTH + 1):
        assert f"Text of level {level}." in text
    assert f"Text of level {MAX_DEPTH + 1}." not in text
    assert f"l{MAX_DEPTH + 1}.eml" in text  # still named


def test_an_outlook_messages_attachments_and_attached_items(tmp_path: Path) -> None:
    reply = legacy.msg_item("Re: crane", "The reply about the crane inspection.")
    data = legacy.msg_file(
        "Board papers",
        "The body of the Outlook message.",
        attachments=[
            ("manual.pdf", samples.pdf(PDF_PAGES), "application/pdf"),
            ("broken.docx", b"PK\x03\x04" + bytes(300), "application/octet-stream"),
            ("ports.tsv", b"city\tmaster\nKiel\tAda\nPorto\tRui\n", "text/tab-separated-values"),
        ],
        attached_items=[reply],
    )
    extracted = read(tmp_path, data)
    text = extracted.text
    assert extracted.format is Format.MSG and extracted.title == "Board papers"
    order = [
        text.index("The body of the Outlook message."),
        text.index("Forwarded message: Re: crane"),
        text.index("The reply about the crane inspection."),
        text.index("Attachments: manual.pdf, broken.docx, ports.tsv"),
        text.index("Attachment: manual.pdf\n"),
        text.index("The attached crane manual."),
        text.index("Attachment: ports.tsv\n"),
        text.index("city: Porto; master: Rui"),
    ]
    assert order == sorted(order)
    assert "Attachment: broken.docx" not in text
    assert extracted.extraction == "text"
