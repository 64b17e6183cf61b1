"""Photos and scans as image files (PNG, JPEG, TIFF, WebP, HEIC), read by OCR (app.extract.ocr).
Found by their magic bytes; each decoded only by its own Pillow plugin (pillow-heif for HEIC).
A TIFF's frames are its pages; of other formats the first (or primary) image is the one page.
A damaged image is `unreadable`; one past MAX_PIXELS (a decompression bomb) is 413, like an
archive that expands past its bound. A photo's EXIF orientation is applied before OCR."""

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from PIL import Image, ImageOps, ImageSequence

from app.extract import ocr
from app.extract.errors import TooLarge, Unreadable, UnsupportedFormat
from app.extract.model import Extracted, Format, paged

log = logging.getLogger(__name__)

MAX_PIXELS = 80_000_000  # one page's: a 48 MP photo, an A1 scan at 300 dpi (Pillow warns at 89 M)
MAX_FRAMES = 2_000  # a TIFF's pages (the time limit usually ends a long one first)
FORMATS = (Format.PNG, Format.JPEG, Format.TIFF, Format.WEBP, Format.HEIC)
_PILLOW_NAMES = {
    Format.PNG: "PNG",
    Format.JPEG: "JPEG",
    Format.TIFF: "TIFF",
    Format.WEBP: "WEBP",
    Format.HEIC: "HEIF",
}
_HEIF_BRANDS = {b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1"}


def sniff(head: bytes) -> Format | None:
    """The image format of a file starting with `head`, if it is one of ours."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return Format.PNG
    if head.startswith(b"\xff\xd8\xff"):
        return Format.JPEG
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):  # TIFF, BigTIFF
        return Format.TIFF
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return Format.WEBP
    if head[4:8] == b"ftyp" and head[8:12] in _HEIF_BRANDS:
        return Format.HEIC
    return None


def extract(path: Path) -> Extracted:
    with path.open("rb") as file:
        format = sniff(file.read(16))
    if format is None:
        raise UnsupportedFormat("not an image format that is read (PNG, JPEG, TIFF, WebP, HEIC)")
    pages: list[str] = []
    for number, (frame, dpi) in enumerate(_frames(path, format), 1):
        try:
            pages.append(ocr.recognise(frame, dpi))
        except ocr.OcrUnavailable as exc:
            raise UnsupportedFormat(
                f"images are read by OCR, which is not set up here: {exc}"
            ) from exc
        except RuntimeError as exc:
            log.warning("OCR of %s page %d failed: %s", format.value, number, exc)
            pages.append("")
    return replace(paged(format, pages), extraction="ocr")


def _frames(path: Path, format: Format) -> Iterator[tuple[Image.Image, int | None]]:
    """Each page decoded (one at a time: a long TIFF is never held whole), EXIF orientation
    applied, with its resolution in dots per inch when the file gives one."""
    name = format.value.upper()
    if format is Format.HEIC:
        from pillow_heif import register_heif_opener

        register_heif_opener()
    with _decoding(name):
        image = Image.open(path, formats=[_PILLOW_NAMES[format]])
    with image:
        frames = ImageSequence.Iterator(image) if format is Format.TIFF else iter([image])
        for _ in range(MAX_FRAMES):
            with _decoding(name):
                frame = next(frames, None)
                if frame is None:
                    return
                _check_size(frame, name)
                frame.load()
                upright = ImageOps.exif_transpose(frame)
            yield upright, _dpi(frame)


@contextmanager
def _decoding(name: str) -> Iterator[None]:
    """Pillow's errors on a damaged file as `unreadable`, a decompression bomb as 413."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            yield
    except (TooLarge, Unreadable, MemoryError):
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise TooLarge(f"the {name} image is too large to read: {exc}") from exc
    except Exception as exc:  # Pillow's plugins raise OSError, SyntaxError, ValueError, ...
        raise Unreadable(f"the {name} image is damaged: {type(exc).__name__}: {exc}") from exc


def _check_size(image: Image.Image, name: str) -> None:
    width, height = image.size
    if width * height > MAX_PIXELS:
        raise TooLarge(
            f"the {name} image is {width} x {height} pixels, past the {MAX_PIXELS:,} that are read"
        )
    if width < 1 or height < 1:
        raise Unreadable(f"the {name} image is empty")


def _dpi(image: Image.Image) -> int | None:
    dpi = image.info.get("dpi")
    try:
        return round(float(dpi[0])) if dpi else None
    except (TypeError, ValueError, IndexError):
        return None
