"""OCR: the two candidate engines on the same pages, character error rate and pages a second.

    .venv/bin/python -m bench.files.ocr [--pages 2] [--runs 3]

The pages are A4 at 300 dpi, set in DejaVu Serif 12 pt (tests/extract/scans.py): `pages` of
English and as many of German prose, each read clean and noisy (grain, speckles, blur, a 1.5°
rotation, JPEG at quality 55). The character error rate is the edit distance between the text
drawn and the text read (whitespace runs as one space, so a line break read as a space is no
error but a space dropped between two words is), over the characters drawn; the targets are
≤ 2 % clean and ≤ 8 % noisy. Pages a second are wall-clock, the median of `runs` rounds; CPU
seconds a page count the engine's own process and children (Tesseract runs as a child).

The engines: Tesseract (Debian's, `eng+deu`, as app/extract/ocr.py calls it: one thread) and
RapidOCR (PyPI `rapidocr`, the PP-OCRv6 small models inside its wheel, on ONNX Runtime, both
cores; in the `bench` extra). RapidOCR is measured as shipped and tuned: its defaults scale a
page down to 2,000 px and run a 180° classifier that turns some lines upside down; the tuned
run keeps 4,000 px and skips the classifier. Both run at the extraction worker's OCR priority
(niceness 19). Results: bench/results/ocr.json."""

import argparse
import importlib
import json
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from PIL import Image

from app.extract import ocr
from bench.harness import results
from tests.extract import scans

RESULTS = results.RESULTS / "ocr.json"
Engine = Callable[[Image.Image], str]


def cer(reference: str, read: str) -> float:
    """Edit distance (Levenshtein) over the reference's length, whitespace runs as one space."""
    a, b = " ".join(reference.split()), " ".join(read.split())
    return distance(a, b) / max(len(a), 1)


def distance(a: str, b: str) -> int:
    """Levenshtein distance, one row at a time in NumPy (a page of 2,000 characters: ~50 ms)."""
    if not a or not b:
        return max(len(a), len(b))
    codes = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    positions = np.arange(len(b) + 1)
    row = positions.copy()
    for i, char in enumerate(a, 1):
        cost = (codes != ord(char)).astype(np.int64)
        step = np.empty(len(b) + 1, dtype=np.int64)
        step[0] = i
        step[1:] = np.minimum(row[1:] + 1, row[:-1] + cost)  # deletion, substitution
        row = np.minimum.accumulate(step - positions) + positions  # insertions, left to right
    return int(row[-1])


def tesseract() -> Engine:
    return lambda image: ocr.recognise(image, 300)


def rapidocr(tuned: bool) -> Engine | None:
    try:  # not in the dev install (`pip install -e '.[bench]'`), so not typed here
        rapid = importlib.import_module("rapidocr")
    except ImportError:
        return None
    params: dict[str, Any] = {"Global.log_level": "error"}
    if tuned:
        params |= {"Global.max_side_len": 4000, "Global.use_cls": False}
    engine = rapid.RapidOCR(params=params)

    def read(image: Image.Image) -> str:
        found = engine(np.asarray(image.convert("RGB")))
        return "\n".join(found.txts or ())

    return read


def pages(count: int) -> dict[str, list[tuple[str, Image.Image]]]:
    """(text drawn, picture) of `count` English and `count` German pages, clean and noisy."""
    texts = [scans.prose(seed) for seed in range(count)]
    texts += [scans.prose(100 + seed, german=True) for seed in range(count)]
    clean = [(text, scans.render(text)) for text in texts]
    noisy = [(text, scans.noisy(page, seed)) for seed, (text, page) in enumerate(clean)]
    return {"clean": clean, "noisy": noisy}


def scanned_files(count: int) -> dict[str, tuple[bytes, str]]:
    """Scans as files, for the extraction rates: a PDF and a TIFF of `count` noisy pages, one
    page as PNG, JPEG, WebP and HEIC."""
    from pillow_heif import register_heif_opener

    register_heif_opener()
    noisy = [scans.noisy(scans.render(scans.prose(seed)), seed) for seed in range(count)]
    first = noisy[0]
    return {
        "pdf (scanned)": (scans.image_pdf(noisy), "scan.pdf"),
        "tiff (scanned)": (
            scans.encoded(first, "TIFF", save_all=True, append_images=noisy[1:]),
            "scan.tiff",
        ),
        "png": (scans.encoded(first, "PNG"), "page.png"),
        "jpeg": (scans.encoded(first, "JPEG", quality=80), "page.jpg"),
        "webp": (scans.encoded(first, "WEBP", quality=80), "page.webp"),
        "heic": (scans.encoded(first.convert("RGB"), "HEIF", quality=80), "page.heic"),
    }


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(engine: Engine, variants: dict[str, list[tuple[str, Image.Image]]], runs: int) -> Any:
    found: dict[str, Any] = {}
    for variant, drawn in variants.items():
        engine(drawn[0][1])  # warm: models loaded, caches filled
        rates, cpu, loads = [], [], []
        errors = characters = 0
        worst = 0.0
        for run in range(runs):
            loads.append(results.load_average()[0])
            started, cpu_started = time.perf_counter(), _cpu_seconds()
            texts = [engine(image) for _, image in drawn]
            rates.append(len(drawn) / (time.perf_counter() - started))
            cpu.append((_cpu_seconds() - cpu_started) / len(drawn))
            if run == 0:  # the engines are deterministic: the text of one round
                for (reference, _), text in zip(drawn, texts, strict=True):
                    flat = " ".join(reference.split())
                    errors += distance(flat, " ".join(text.split()))
                    characters += len(flat)
                    worst = max(worst, cer(reference, text))
        found[variant] = {
            "pages": len(drawn),
            "cer_percent": round(100 * errors / characters, 2),
            "worst_page_cer_percent": round(100 * worst, 2),
            "pages_per_s": round(statistics.median(rates), 3),
            "cpu_s_per_page": round(statistics.median(cpu), 2),
            "runs_pages_per_s": [round(rate, 3) for rate in rates],
            "load_1min_per_run": loads,
        }
        print(variant, found[variant], flush=True)
    return found


def compare(count: int, runs: int) -> dict[str, Any]:
    variants = pages(count)
    # Both engines at the OCR priority of the extraction worker (and in the same process).
    ocr.recognise(Image.new("L", (64, 64), 255))
    engines: dict[str, Engine | None] = {
        "tesseract": tesseract(),
        "rapidocr (as shipped)": rapidocr(tuned=False),
        "rapidocr (tuned)": rapidocr(tuned=True),
    }
    found: dict[str, Any] = {"languages": ocr.languages(), "dpi": 300}
    for name, engine in engines.items():
        if engine is None:
            print(name, "not installed: skipped", flush=True)
            continue
        print(name, flush=True)
        found[name] = measure(engine, variants, runs)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=2, help="pages of each language")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    before = results.load_average(None)
    found = compare(args.pages, args.runs)
    found |= {"load_before": before, "load_after": results.load_average(None)}
    print(json.dumps(found, indent=1), flush=True)
    results.write_results(RESULTS, found | {"machine": results.machine()}, end="\n")


if __name__ == "__main__":
    main()
