"""`astrolabe-search ingest` ends with a report per format: files read, read by OCR, without
text, skipped and why (a refusal's code, or `unchanged` for a file indexed at its modification
time)."""

import re
from pathlib import Path

import pytest

from app.cli import main
from app.cli.indexing import FormatReport
from app.ingest.documents import Document
from tests.extract import legacy_samples as legacy
from tests.extract import samples


def _ingest(folder: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    with pytest.raises(SystemExit) as done:
        main(["ingest", str(folder), "--no-optimize"])
    assert done.value.code == 0
    return capsys.readouterr().out.splitlines()


def _row(lines: list[str], format: str) -> list[str]:
    row = next(line for line in lines if line.startswith(f"{format} "))
    return re.split(r"\s{2,}", row.strip())


def test_ingest_reports_each_format_read_and_skipped_with_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "memo.doc").write_bytes((legacy.DATA / "memo.doc").read_bytes())
    (folder / "locked.doc").write_bytes(legacy.encrypted_doc())
    (folder / "ports.csv").write_bytes(b"city,master\nKiel,Ada\nPorto,Rui\n")
    (folder / "noise.csv").write_bytes(bytes(range(256)) * 8)  # not text at all
    (folder / "scan.pdf").write_bytes(samples.pdf(["", ""]))  # no text layer
    (folder / "report.pdf").write_bytes(samples.pdf(["A page about the harbour."]))
    (folder / "book.epub").write_bytes(legacy.epub_with({"bomb.bin": bytes(3 * 2**20)}))
    monkeypatch.setenv("SEARCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SEARCH_MAX_ARCHIVE_BYTES", str(2**20))
    lines = _ingest(folder, capsys)
    header = next(line for line in lines if line.startswith("format "))
    assert header.split() == ["format", "read", "OCR", "no", "text", "skipped", "why", "skipped"]
    assert _row(lines, "doc") == ["doc", "1", "0", "0", "1", "encrypted 1"]
    assert _row(lines, "csv") == ["csv", "1", "0", "0", "1", "unsupported_format 1"]
    assert _row(lines, "pdf") == ["pdf", "2", "0", "1", "0"]
    assert _row(lines, "epub") == ["epub", "0", "0", "0", "1", "payload_too_large 1"]
    assert _row(lines, "total") == ["total", "4", "0", "1", "3"]

    again = _ingest(folder, capsys)  # the files read are indexed now: not read again
    assert _row(again, "pdf") == ["pdf", "0", "0", "0", "2", "unchanged 2"]
    assert _row(again, "doc") == ["doc", "0", "0", "0", "2", "encrypted 1, unchanged 1"]


def _document(mime_type: str, extraction: str = "text", no_text: bool = False) -> Document:
    return Document(
        doc_type="file", doc_id="x", title="t", content="" if no_text else "text", owner="o",
        modified_at=0, file_path=None, tags=(), category=None, mime_type=mime_type, acl=(),
        no_text=no_text, extraction=extraction,
    )  # fmt: skip


def test_files_read_by_ocr_are_counted_as_such() -> None:
    report = FormatReport()
    report.read(_document("application/pdf", "ocr"))
    report.read(_document("application/pdf", "mixed"))
    report.read(_document("application/pdf"))
    report.read(_document("message/rfc822", "mixed"))
    report.skipped(Path("/x/notes.md"), "unchanged")
    rows = {line.split()[0]: line.split()[1:] for line in report.lines()[1:]}
    assert rows == {
        "eml": ["1", "1", "0", "0"],
        "markdown": ["0", "0", "0", "1", "unchanged", "1"],
        "pdf": ["3", "2", "0", "0"],
        "total": ["4", "3", "0", "1"],
    }
    assert FormatReport().lines() == []
