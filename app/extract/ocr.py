"""Text from a picture of text: Tesseract (Debian's `tesseract-ocr`, with its `eng` and `deu`
data), run as a child of the extraction worker, one page at a time.

Why Tesseract: both candidates read the same pages (bench/files/ocr.py: A4 at 300 dpi, English
and German prose, clean and noisy: grain, speckles, blur, a 1.5° rotation, JPEG artefacts).

    engine                            CER clean / noisy   pages/s clean / noisy   CPU s a page
    Tesseract 5.3 (eng+deu, 1 thread)    0.12 % / 0.19 %        0.44 / 0.42             2.3
    RapidOCR 3.10 as shipped             9.58 % / 0.75 %        0.24 / 0.29           6.7-7.9
    RapidOCR 3.10 tuned (2 threads)      0.00 % / 0.00 %        0.15 / 0.15            12.0

(medians of 3 bench runs of 3 rounds each, load average 0.2-2.3 on the 2 shared cores.)
RapidOCR (PP-OCRv6 small, its weights inside the PyPI wheel, on ONNX Runtime) is exact once
tuned (no 180° line classifier, which turned lines upside down; pages kept at 4,000 px, not
scaled to 2,000), but it spends 5 times Tesseract's CPU a page, on a machine whose 2 cores also
serve searches and embed; its wheel brings OpenCV and Shapely into the image, and only its
default (Chinese and Latin script) models are inside the wheel: another script's are downloads
at run time. Tesseract's error rate is far inside the targets (2 % clean, 8 % noisy), its
languages are a setting (`SEARCH_OCR_LANGUAGES`, `eng+deu`), each one Debian package
(`tesseract-ocr-fra`, ...), and it runs outside the worker's Python process.

Where it runs: only in an extraction worker (app.extract.sandbox), never in the service. Before
the first page the worker lowers its own priority to the lowest (OCR is the bulk work behind
text extraction, embedding and searches), and Tesseract inherits it, the worker's memory cap,
and one thread (OMP_THREAD_LIMIT). A worker cut off at the time limit takes its Tesseract with
it (PR_SET_PDEATHSIG). Words Tesseract is unsure of that hold no letter or digit (stray marks,
rules, specks) are dropped; a picture without text gives no text."""

import ctypes
import functools
import io
import itertools
import logging
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass

import numpy as np
from PIL import Image
from pydantic import ValidationError

from app.config import Settings

log = logging.getLogger(__name__)

OCR_NICENESS = 19  # below the worker's own 10: text files, embedding and searches come first
MAX_PIXELS = 40_000_000  # a bigger picture is scaled down first (a 48 MP photo: 8000 x 6000)
PAGE_SECONDS = 600.0  # a backstop: the worker's time limit (SEARCH_EXTRACT_TIMEOUT) cuts first
MARK_CONFIDENCE = 60.0  # below it, a "word" of no letter or digit is a speck or a rule
PARAGRAPH_GAP = 0.6
_PR_SET_PDEATHSIG = 1
_LANGUAGE = re.compile(r"^[A-Za-z_]+$")


class OcrUnavailable(Exception):
    """No Tesseract, or none of the configured languages installed."""


@functools.cache
def languages() -> str:
    """The configured languages (SEARCH_OCR_LANGUAGES, as the service's environment has it)
    that are installed, as Tesseract's `-l` takes them: `eng+deu`."""
    binary = shutil.which("tesseract")
    if binary is None:
        raise OcrUnavailable("OCR needs Tesseract: apt-get install tesseract-ocr (setup.sh)")
    try:
        configured = Settings().ocr_languages
    except ValidationError as exc:  # the service, started from the same environment, says so
        configured = Settings.model_fields["ocr_languages"].default
        log.warning("settings not valid (%d errors): OCR in %s", exc.error_count(), configured)
    wanted = [name for name in configured.split("+") if _LANGUAGE.match(name)]
    listed = subprocess.run(
        [binary, "--list-langs"], capture_output=True, text=True, timeout=60, check=False
    )
    installed = {line.strip() for line in listed.stdout.splitlines()[1:]}  # after the heading
    found = [name for name in wanted if name in installed]
    missing = [name for name in wanted if name not in installed]
    if missing:
        log.warning(
            "OCR languages not installed: %s (apt-get install %s)",
            ", ".join(missing),
            " ".join(f"tesseract-ocr-{name.lower().replace('_', '-')}" for name in missing),
        )
    if not found:
        raise OcrUnavailable(f"none of the OCR languages {'+'.join(wanted)} is installed")
    return "+".join(found)


def recognise(image: Image.Image, dpi: int | None = None) -> str:
    """The text on the picture: paragraphs separated by a blank line, lines by a newline ("" if
    there is none). OcrUnavailable without Tesseract; RuntimeError if Tesseract fails on it."""
    langs = languages()
    _lower_priority()
    page = _prepared(image)
    command = ["tesseract", "stdin", "stdout", "-l", langs, "--psm", "3"]
    if dpi is not None and 70 <= dpi <= 1200:
        command += ["--dpi", str(dpi)]
    command.append("tsv")  # words with their boxes and confidences
    buffer = io.BytesIO()
    page.save(buffer, "PPM")  # uncompressed PGM: nothing to encode or decode
    try:
        done = subprocess.run(
            command,
            input=buffer.getvalue(),
            capture_output=True,
            timeout=PAGE_SECONDS,
            env=os.environ | {"OMP_THREAD_LIMIT": "1"},
            preexec_fn=_die_with_parent,  # safe: the worker runs no threads
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"Tesseract took longer than {PAGE_SECONDS:g} s") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()[-500:]
        raise RuntimeError(f"Tesseract failed ({done.returncode}): {message}")
    return text_of(done.stdout.decode("utf-8", "replace"))


def text_of(tsv: str) -> str:
    """Tesseract's TSV (level, page, block, paragraph, line, word, box, confidence, text) as
    text: the words of a line joined by spaces, lines by newlines, paragraphs by blank lines. A
    block or paragraph Tesseract starts right below the line before (closer than
    PARAGRAPH_GAP of a line's height: a short last line, a slight tilt) goes on the same
    paragraph, so no sentence is cut in two."""
    lines: dict[tuple[str, ...], _Line] = {}
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) != 12 or not cells[0].isdigit() or int(cells[0]) < 4:
            continue
        key = tuple(cells[1:5])  # page, block, paragraph, line
        if cells[0] == "4":
            top, height = int(cells[7]), int(cells[9])
            lines[key] = _Line(top, top + height, [])
            continue
        word, confidence = cells[11].strip(), float(cells[10])
        if not word or (confidence < MARK_CONFIDENCE and not any(c.isalnum() for c in word)):
            continue
        if key in lines:
            lines[key].words.append(word)
    kept = [(key, line) for key, line in lines.items() if line.words]
    if not kept:
        return ""
    heights = sorted(line.bottom - line.top for _, line in kept)
    gap = PARAGRAPH_GAP * heights[len(heights) // 2]
    parts = [" ".join(kept[0][1].words)]
    for (before_key, before), (key, line) in itertools.pairwise(kept):
        same = key[:3] == before_key[:3] or 0 <= line.top - before.bottom < gap
        parts.append(("\n" if same else "\n\n") + " ".join(line.words))
    return "".join(parts)


@dataclass
class _Line:
    top: int
    bottom: int
    words: list[str]


def _prepared(image: Image.Image) -> Image.Image:
    """Grayscale on white (transparency flattened), at most MAX_PIXELS."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(white, rgba)
    if image.mode.startswith(("I", "F")):  # 16 or 32 bits a pixel: stretched to 8
        values = np.asarray(image, dtype=np.float64)
        top = float(values.max()) or 1.0
        image = Image.fromarray(np.clip(values * (255 / top), 0, 255).astype(np.uint8), "L")
    page = image.convert("L")
    pixels = page.width * page.height
    if pixels > MAX_PIXELS:
        shrink = (MAX_PIXELS / pixels) ** 0.5
        size = (max(1, int(page.width * shrink)), max(1, int(page.height * shrink)))
        page = page.resize(size, Image.Resampling.LANCZOS)
    return page


def _lower_priority() -> None:
    """This worker, and the Tesseract it starts, at the lowest CPU priority (from then on)."""
    current = os.nice(0)
    if current < OCR_NICENESS:
        os.nice(OCR_NICENESS - current)


def _die_with_parent() -> None:
    """In the Tesseract child before it starts: killed when the worker dies (time limit)."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here, not in the child between fork and exec
