"""OCR of images and scanned PDF pages (Tesseract), on pages rendered here with Pillow, made
noisy and slightly rotated: read in this process, in a real extraction worker (niced, with the
languages of its environment), and through the real app (POST /api/v1/files, then a search)."""

import io
import json
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image
from pydantic import ValidationError
from pypdf import PdfReader, PdfWriter

from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.extract import ocr
from app.extract.archive import ArchiveLimits
from app.extract.errors import TooLarge, Unreadable, UnsupportedFormat
from app.extract.model import Extracted, Format
from app.extract.reader import read_file
from app.extract.sandbox import Extractor
from tests.extract import samples, scans
from tests.helpers import auth, envelope, running_app

PAGE_3 = "On the third page, the harbour master counted forty-two boats at the eastern pier."
GERMAN = "Die Brücke über den Fluss wurde im Frühjahr gesperrt. Grüße aus München."


@pytest.fixture(autouse=True)
def _ocr_here(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """In this process, OCR keeps the test runner's priority, and the languages are read anew."""
    monkeypatch.setattr(ocr, "_lower_priority", lambda: None)
    monkeypatch.delenv("SEARCH_OCR_LANGUAGES", raising=False)
    ocr.languages.cache_clear()
    yield
    ocr.languages.cache_clear()


def flat(text: str) -> str:
    return " ".join(text.split())


def read(tmp_path: Path, data: bytes) -> Extracted:
    path = tmp_path / "upload"
    path.write_bytes(data)
    return read_file(path, ArchiveLimits())


def photo(text: str, seed: int = 0) -> Image.Image:
    """A noisy, slightly rotated picture of `text`."""
    return scans.noisy(scans.snippet(text), seed=seed, rotate=1.0)


IMAGES: dict[str, tuple[Format, str, dict[str, Any]]] = {
    "png": (Format.PNG, "PNG", {}),
    "jpeg": (Format.JPEG, "JPEG", {"quality": 70}),
    "tiff": (Format.TIFF, "TIFF", {"compression": "tiff_lzw"}),
    "webp": (Format.WEBP, "WEBP", {"quality": 80}),
    "heic": (Format.HEIC, "HEIF", {"quality": 80}),
}


@pytest.mark.parametrize("kind", sorted(IMAGES))
def test_an_image_of_text_is_read_by_ocr(tmp_path: Path, kind: str) -> None:
    format, pillow_name, options = IMAGES[kind]
    if format is Format.HEIC:
        from pillow_heif import register_heif_opener

        register_heif_opener()
    picture = photo(PAGE_3).convert("RGB")
    extracted = read(tmp_path, scans.encoded(picture, pillow_name, **options))
    assert extracted.format is format and extracted.mime_type.startswith("image/")
    assert extracted.extraction == "ocr" and extracted.page_count == 1
    assert "harbour master counted forty-two boats" in flat(extracted.text), extracted.text


def test_a_tiffs_frames_are_its_pages(tmp_path: Path) -> None:
    frames = [photo(f"Frame number {word} of the fax.", n) for n, word in enumerate(["one", "two"])]
    data = scans.encoded(frames[0], "TIFF", save_all=True, append_images=frames[1:])
    extracted = read(tmp_path, data)
    assert extracted.page_count == 2
    assert "Frame number two" in extracted.text[extracted.page_starts[1] :]
    assert "Frame number two" not in extracted.text[: extracted.page_starts[1]]


def test_a_photos_exif_orientation_is_applied(tmp_path: Path) -> None:
    upright = scans.snippet("The camera was held sideways.")
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90° clockwise to view"
    data = scans.encoded(upright.rotate(90, expand=True), "JPEG", exif=exif)
    assert "camera was held sideways" in flat(read(tmp_path, data).text)


def test_a_scanned_pdf_page_is_read_in_place(tmp_path: Path) -> None:
    data = scans.mixed_pdf(["Typed first page.", "Typed second page.", photo(PAGE_3)])
    extracted = read(tmp_path, data)
    assert extracted.page_count == 3 and extracted.extraction == "mixed"
    third = extracted.text[extracted.page_starts[2] :]
    assert "harbour master counted forty-two boats" in flat(third)
    assert "harbour" not in extracted.text[: extracted.page_starts[2]]


def test_a_scan_under_a_scanner_apps_stamp_is_read(tmp_path: Path) -> None:
    page = scans.render(PAGE_3)  # an A4 page: the stamp (at 40, 750 pt) is on it
    writer = PdfWriter(clone_from=io.BytesIO(scans.image_pdf([page])))
    stamp = PdfReader(io.BytesIO(samples.pdf(["Scanned with PocketScan"]))).pages[0]
    writer.pages[0].merge_page(stamp)
    buffer = io.BytesIO()
    writer.write(buffer)
    extracted = read(tmp_path, buffer.getvalue())
    assert extracted.text.startswith("Scanned with PocketScan\n\n")
    assert "harbour master counted" in flat(extracted.text) and extracted.extraction == "ocr"


def test_a_pdf_of_scans_only_says_ocr(tmp_path: Path) -> None:
    extracted = read(tmp_path, scans.image_pdf([photo("A scanned receipt for coffee.")]))
    assert extracted.extraction == "ocr" and "receipt for coffee" in flat(extracted.text)


def test_a_picture_without_text_gives_no_text(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    noise = Image.fromarray(rng.integers(0, 256, (900, 1200), dtype=np.uint8), "L")
    extracted = read(tmp_path, scans.encoded(noise, "PNG"))
    assert extracted.text == "" and not extracted.has_text


@pytest.mark.parametrize(
    "data",
    [
        scans.encoded(Image.new("L", (400, 300), 255), "PNG")[:120],
        scans.encoded(Image.new("RGB", (400, 300), "white"), "JPEG")[:200],
        b"\x89PNG\r\n\x1a\n" + bytes(300),
        b"II*\x00" + bytes(100),
        b"RIFF\x00\x00\x00\x00WEBPVP8 " + bytes(50),
    ],
    ids=["truncated png", "truncated jpeg", "png of zeros", "tiff of zeros", "webp of zeros"],
)
def test_a_damaged_image_is_unreadable(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(Unreadable, match="image is damaged"):
        read(tmp_path, data)


def _png_declaring(width: int, height: int) -> bytes:
    """A small PNG that declares `width` x `height` pixels (a decompression bomb's header)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(bytes(width + 1) * 16)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels)


def test_an_image_past_the_pixel_bound_is_too_large(tmp_path: Path) -> None:
    with pytest.raises(TooLarge, match="9000 x 9000 pixels, past the"):
        read(tmp_path, _png_declaring(9_000, 9_000))  # below Pillow's own bomb warning
    with pytest.raises(TooLarge, match="too large"):
        read(tmp_path, _png_declaring(30_000, 30_000))


def test_images_without_tesseract_are_an_unsupported_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shutil.which", lambda _: None)
    with pytest.raises(UnsupportedFormat, match="OCR"):
        read(tmp_path, scans.encoded(photo(PAGE_3), "PNG"))


@pytest.mark.parametrize(
    ("languages", "umlauts"), [("deu", True), ("eng+deu", True), ("eng", False)]
)
def test_the_ocr_languages_are_a_setting(
    monkeypatch: pytest.MonkeyPatch, languages: str, umlauts: bool
) -> None:
    monkeypatch.setenv("SEARCH_OCR_LANGUAGES", languages)
    text = flat(ocr.recognise(scans.snippet(GERMAN), 300))
    assert ocr.languages() == languages
    assert ("Brücke über den Fluss" in text and "Grüße aus München" in text) is umlauts, text


def test_a_language_that_is_not_installed_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEARCH_OCR_LANGUAGES", "eng+xyz")
    assert ocr.languages() == "eng"


def test_the_languages_setting_takes_tesseract_names_only() -> None:
    assert Settings(ocr_languages="eng+deu+chi_sim").ocr_languages == "eng+deu+chi_sim"
    for wrong in ("eng deu", "-l", "eng+", "../eng"):
        with pytest.raises(ValidationError):
            Settings(ocr_languages=wrong)


TSV = "\n".join(
    [
        "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext",
        "4\t1\t1\t1\t1\t0\t100\t100\t900\t40\t-1\t",
        "5\t1\t1\t1\t1\t1\t100\t100\t90\t40\t96\tThe",
        "5\t1\t1\t1\t1\t2\t200\t100\t90\t40\t95\tboats",
        "5\t1\t1\t1\t1\t3\t300\t100\t10\t40\t20\t|",
        "4\t1\t2\t1\t1\t0\t100\t150\t900\t40\t-1\t",  # a block just below: the same paragraph
        "5\t1\t2\t1\t1\t1\t100\t150\t90\t40\t91\tmoored.",
        "4\t1\t3\t1\t1\t0\t100\t400\t900\t40\t-1\t",  # far below: a paragraph of its own
        "5\t1\t3\t1\t1\t1\t100\t400\t90\t40\t40\tNext",
        "5\t1\t3\t1\t1\t2\t200\t400\t90\t40\t93\tparagraph.",
        "4\t1\t4\t1\t1\t0\t100\t600\t900\t40\t-1\t",
        "5\t1\t4\t1\t1\t1\t100\t600\t90\t40\t10\t~",  # a speck: dropped, and its line with it
    ]
)


def test_tesseracts_words_become_lines_and_paragraphs() -> None:
    assert ocr.text_of(TSV) == "The boats\nmoored.\n\nNext paragraph."
    assert ocr.text_of(TSV.splitlines()[0]) == ""


def _niceness(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])  # field 19 of the whole line


def test_the_worker_reads_images_niced_with_the_languages_of_its_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEARCH_OCR_LANGUAGES", "eng")
    path = tmp_path / "brief.png"
    path.write_bytes(scans.encoded(scans.snippet(GERMAN), "PNG"))
    extractor = Extractor(1, 120, ArchiveLimits())
    try:
        extracted = extractor.extract(path)
        (worker,) = extractor._all
        niceness = _niceness(worker.process.pid)
    finally:
        extractor.close()
    assert "Fluss" in extracted.text and "Brücke" not in extracted.text, extracted.text
    assert niceness == ocr.OCR_NICENESS


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        if entry.name.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def test_tesseract_dies_with_a_worker_cut_off_at_the_time_limit(tmp_path: Path) -> None:
    pages = [scans.render(scans.prose(seed)) for seed in range(8)]  # 2 s of OCR a page, or more
    tiff = scans.encoded(
        pages[0], "TIFF", save_all=True, append_images=pages[1:], compression="tiff_lzw"
    )
    path = tmp_path / "long.tiff"
    path.write_bytes(tiff)
    extractor = Extractor(1, 8, ArchiveLimits())  # time for a Tesseract to start, if busy
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for worker in list(extractor._all):
                seen.update(_children(worker.process.pid))
            time.sleep(0.1)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with pytest.raises(Unreadable, match="time limit"):
            extractor.extract(path)
    finally:
        done.set()
        watcher.join()
        extractor.close()
    assert seen, "no Tesseract was seen running"
    deadline = time.monotonic() + 5
    while any(_running(pid) for pid in seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in seen if _running(pid)]


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# Through the real app: upload, then search.


@pytest.fixture(scope="module")
def scans_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with running_app(tmp_path_factory.mktemp("scans") / "data", HashingEncoder()) as client:
        yield client


def upload(client: TestClient, data: bytes, doc_id: str, name: str) -> Any:
    return client.post(
        "/api/v1/files?wait=true",
        files={"file": (name, data)},
        data={"metadata": json.dumps({"doc_id": doc_id, "owner": "alice"})},
        headers=auth(),
    )


def search(client: TestClient, query: str, doc_id: str) -> list[dict[str, Any]]:
    body = {"query": query, "algorithm": "bm25", "limit": 5}
    found = client.post("/api/v1/search", json=body, headers=auth()).json()["results"]
    return [hit for hit in found if hit["doc_id"] == doc_id]


def test_a_sentence_of_a_scanned_page_3_is_found_on_page_3(scans_client: TestClient) -> None:
    data = scans.mixed_pdf(
        [
            "The first page lists the opening hours of the market.",
            "The second page describes the tides and the weather.",
            photo(PAGE_3),
        ]
    )
    answer = upload(scans_client, data, "mixed", "harbour.pdf")
    assert answer.status_code == 200, answer.text
    assert answer.json()["page_count"] == 3
    hits = search(scans_client, "harbour master counted boats eastern pier", "mixed")
    assert hits and hits[0]["page_number"] == 3, hits
    record = scans_client.get("/api/v1/documents/file/mixed", headers=auth()).json()
    assert record["extraction"] == "mixed" and record["page_count"] == 3


@pytest.mark.parametrize(("name", "pillow_name"), [("note.png", "PNG"), ("note.jpg", "JPEG")])
def test_a_photo_of_a_note_is_found(scans_client: TestClient, name: str, pillow_name: str) -> None:
    doc_id = name.replace(".", "-")
    data = scans.encoded(photo("Remember to water the garden lantern plants.", 3), pillow_name)
    answer = upload(scans_client, data, doc_id, name)
    assert answer.status_code == 200, answer.text
    assert answer.json()["mime_type"] == ("image/png" if pillow_name == "PNG" else "image/jpeg")
    assert search(scans_client, "water garden lantern plants", doc_id)
    record = scans_client.get(f"/api/v1/documents/file/{doc_id}", headers=auth()).json()
    assert record["extraction"] == "ocr"


def test_a_damaged_image_is_422_unreadable(scans_client: TestClient) -> None:
    data = scans.encoded(photo(PAGE_3), "PNG")[:2000]
    message = envelope(upload(scans_client, data, "broken", "broken.png"), 422, "unreadable")
    assert "PNG" in message
    missing = scans_client.get("/api/v1/documents/file/broken", headers=auth())
    assert missing.status_code == 404


def test_a_scan_without_recognisable_text_is_no_text(scans_client: TestClient) -> None:
    rng = np.random.default_rng(11)
    speckles = Image.fromarray(
        np.where(rng.random((1100, 850)) < 0.002, 0, 255).astype(np.uint8), "L"
    )
    answer = upload(scans_client, scans.image_pdf([speckles], dpi=100), "blank", "blank.pdf")
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "no_text"


def test_the_benchs_character_error_rate() -> None:
    from bench.files.ocr import cer, distance

    assert distance("kitten", "sitting") == 3 and distance("", "abc") == 3
    assert distance("Größe", "Grosse") == 3
    assert cer("a  b\nc", "a b c") == 0.0  # whitespace runs count as one space
    assert cer("abcd", "") == 1.0 and cer("ab cd", "abcd") == 0.2
