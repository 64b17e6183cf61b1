"""File extraction: how fast each format is read (pages a second, beside the embedding model's
own rate in pages), and what extraction does to searches (p50/p99 while 20 large PDFs are read).

    .venv/bin/python -m bench.files.extraction rates [--pages 200] [--runs 3] [--ocr-pages 4]
    .venv/bin/python -m bench.files.extraction searches [--rounds 2]
    .venv/bin/python -m bench.files.extraction ocr-searches [--rounds 2]

`rates` reads generated files in this process (the extractors alone): each format, the
browser-printed PDF with PDFium and with pypdf (the reader before it), and scans read by OCR
(a PDF of `ocr-pages` noisy 300 dpi pages, a TIFF of as many, one page as PNG, JPEG, WebP and
HEIC; the engines' error rates: bench/files/ocr.py). `searches` runs the real
`serve` over the demo corpus and alternates idle rounds with rounds in which 20 PDFs of ~1,800
pages are uploaded at once; each PDF's text is past what a document may hold, so it is refused
with 413 *after* extraction and nothing is embedded: the round measures extraction alone.
`ocr-searches` does the same with 20 PDFs of 3 noisy scanned pages each, read by OCR (at the
lowest priority) and indexed. The
same searches also run in one process beside a thread reading the PDF (the design rejected:
pypdf holds the GIL) and beside the worker process, interleaved. Results: bench/results/."""

import argparse
import json
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from app.embeddings.dense import MiniLMEncoder
from app.extract.archive import ArchiveLimits
from app.extract.model import Extracted
from app.extract.reader import read_file
from app.extract.sandbox import Extractor
from app.ingest.chunking import chunk_pages
from bench.files.ocr import scanned_files
from bench.harness import results
from bench.harness.figures import percentiles, timed_ms
from bench.harness.model import chunks_per_second
from bench.harness.service import demo_service
from tests.extract import samples, scans

RESULTS = results.RESULTS / "extraction.json"
DATA = results.DATA / "extraction"
CHARS_PER_PAGE = 3_000  # an unpaged format's "page", to compare it with the paged ones
QUERIES = ["quarterly budget", "garden lantern", "travel plans", "team meeting notes"]
KEY = "extraction-bench"
SCANNED_PAGES = 3  # of each of the 20 scanned PDFs of `ocr-searches`


def prose(page: int, words: int) -> str:
    sentence = "Paragraph {0}.{1} of the report records an ordinary day at the harbour."
    return " ".join(sentence.format(page, i) for i in range(words // 12))


def formats(pages: int) -> dict[str, tuple[bytes, str]]:
    """A file of each format with `pages` pages, slides or sheets (unpaged ones: as much text)."""
    page_texts = [prose(n, 400) for n in range(pages)]
    slides = [prose(n, 60) for n in range(pages)]
    sheets = [
        [[f"row {r}", r, r * 1.5, f"item {r} of sheet {n}"] for r in range(100)]
        for n in range(pages)
    ]
    text = "\n\n".join(page_texts)
    return {
        "pdf": (samples.pdf(page_texts), "r.pdf"),
        "pptx": (samples.pptx_file(slides), "r.pptx"),
        "odp": (samples.odp_file(slides), "r.odp"),
        "xlsx": (samples.xlsx_file(sheets), "r.xlsx"),
        "ods": (samples.ods_file([[" | ".join(map(str, r)) for r in s] for s in sheets]), "r.ods"),
        "docx": (samples.docx_file(page_texts), "r.docx"),
        "odt": (samples.odt_file(page_texts), "r.odt"),
        "html": (samples.html_file(page_texts), "r.html"),
        "markdown": (text.encode(), "r.md"),
        "text": (text.encode(), "r.txt"),
        "eml": (samples.eml_file("Report", text), "r.eml"),
    }  # fmt: skip


def chromium_pdf(pages: int) -> bytes | None:
    """A PDF as a real producer writes one (embedded subset fonts, Skia): Chromium printing an
    HTML page of `pages` sections, each on its own page. None without Debian's chromium."""
    from bench.harness.chromium import CHROMIUM

    if not CHROMIUM.exists():
        return None
    DATA.mkdir(parents=True, exist_ok=True)
    sections = "".join(
        f"<section><h2>Section {n}</h2><p>{prose(n, 400)}</p></section>" for n in range(pages)
    )
    page = DATA / "chromium.html"
    page.write_text(
        "<!DOCTYPE html><meta charset=utf-8><style>section{page-break-after:always;"
        f"font:11pt serif}}</style>{sections}"
    )
    target = DATA / "chromium.pdf"
    subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
         f"--print-to-pdf={target}", page.as_uri()],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return target.read_bytes()


def pages_of(extracted: Extracted) -> float:
    return extracted.page_count or len(extracted.text) / CHARS_PER_PAGE


def rates(pages: int, runs: int, ocr_pages: int = 4) -> dict[str, Any]:
    DATA.mkdir(parents=True, exist_ok=True)
    found: dict[str, Any] = {}
    files = formats(pages)
    printed = chromium_pdf(pages)
    if printed is not None:
        files["pdf (chromium)"] = (printed, "chromium.pdf")
    for name, (data, filename) in files.items():
        found[name] = read_rate(data, filename, runs)
        print(name, found[name], flush=True)
    pdf = read_file(DATA / "r.pdf", ArchiveLimits())
    chunks = chunk_pages(pdf.text, pdf.page_starts, False)
    texts = [f"report\n{chunk.text}" for chunk in chunks[:200]]
    encoder = MiniLMEncoder()
    encoder.encode(texts[:8])
    rate = statistics.median(chunks_per_second(encoder, texts) for _ in range(runs))
    per_page = len(chunks) / (pdf.page_count or 1)
    found["embedding"] = {
        "chunks_per_s": round(rate, 1),
        "chunks_per_pdf_page": round(per_page, 2),
        "pdf_pages_per_s": round(rate / per_page, 1),
    }
    print("embedding", found["embedding"], flush=True)
    if printed is not None:  # the reader before PDFium, on the same file
        found["pdf (chromium, pypdf)"] = pypdf_rate(DATA / "chromium.pdf", runs)
        print("pdf (chromium, pypdf)", found["pdf (chromium, pypdf)"], flush=True)
    # Scans last: the first OCR lowers this process to the OCR priority, as it does a worker.
    for name, (data, filename) in scanned_files(ocr_pages).items():
        found[name] = read_rate(data, filename, runs) | {"extraction": "ocr"}
        print(name, found[name], flush=True)
    return found


def read_rate(data: bytes, filename: str, runs: int) -> dict[str, Any]:
    """How fast the extractor reads the file (median of `runs`)."""
    path = DATA / filename
    path.write_bytes(data)
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        extracted = read_file(path, ArchiveLimits(), filename)
        seconds.append(time.perf_counter() - started)
    median = statistics.median(seconds)
    return {
        "pages": round(pages_of(extracted), 1),
        "paged": extracted.page_count is not None,
        "file_kib": round(len(data) / 1024),
        "seconds": round(median, 3),
        "pages_per_s": round(pages_of(extracted) / median, 2),
        "mib_per_s": round(len(data) / 2**20 / median, 2),
        "load_1min": results.load_average()[0],
    }


def pypdf_rate(path: Path, runs: int) -> dict[str, Any]:
    """pypdf's text extraction (app/extract/pdf.py before PDFium) on the same file."""
    from pypdf import PdfReader

    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        pages = [page.extract_text() for page in PdfReader(path).pages]
        seconds.append(time.perf_counter() - started)
    median = statistics.median(seconds)
    return {
        "pages": len(pages),
        "seconds": round(median, 3),
        "pages_per_s": round(len(pages) / median, 1),
        "load_1min": results.load_average()[0],
    }


def _search_while(
    search: Callable[[], object], busy: Callable[[threading.Event], None] | None, seconds: float
) -> list[float]:
    """Search latencies (ms) for `seconds`, while `busy` runs beside (until told to stop)."""
    stop = threading.Event()
    worker = threading.Thread(target=busy, args=(stop,)) if busy else None
    if worker:
        worker.start()
        time.sleep(0.5)  # let it get going
    samples_ms = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        samples_ms.append(timed_ms(search)[0])
    stop.set()
    if worker:
        worker.join()
    return samples_ms


def in_process(rounds: int, seconds: float) -> dict[str, Any]:
    """One process: searches alone, beside a thread running pypdf, beside the worker process."""
    from app.auth import Principal
    from app.embeddings.sparse import Bm25Encoder
    from app.ingest.models import validate_batch
    from app.ingest.pipeline import Indexer
    from app.search.algorithms import QueryEncoder
    from app.search.service import SearchQuery, SearchService
    from app.store.edge import EdgeStore
    from bench.harness.model import long_documents

    path = DATA / "big.pdf"
    path.write_bytes(samples.pdf([prose(n, 400) for n in range(300)]))
    encoder = MiniLMEncoder()
    with tempfile.TemporaryDirectory() as folder:
        store = EdgeStore(Path(folder), "bench", facet_index=False)
        indexer = Indexer(store, encoder, Bm25Encoder())
        indexer.index(indexer.accept(validate_batch(long_documents(100))))
        service = SearchService(store, QueryEncoder(encoder, Bm25Encoder()), 60)
        queries = iter(QUERIES * 1_000_000)

        def search() -> object:
            return service.search(Principal("bench"), SearchQuery(text=next(queries)))

        def thread_reads(stop: threading.Event) -> None:
            while not stop.is_set():
                read_file(path, ArchiveLimits())

        extractor = Extractor(1, 300, ArchiveLimits())
        extractor.extract(path)  # started and warm

        def worker_reads(stop: threading.Event) -> None:
            while not stop.is_set():
                extractor.extract(path)

        modes = {"idle": None, "thread": thread_reads, "worker process": worker_reads}
        measured: dict[str, list[float]] = {mode: [] for mode in modes}
        try:
            for _ in range(rounds):
                for mode, busy in modes.items():  # interleaved: each round runs every mode
                    measured[mode] += _search_while(search, busy, seconds)
        finally:
            extractor.close()
            store.close()
    return {mode: percentiles(ms) | {"searches": len(ms)} for mode, ms in measured.items()}


def over_http(rounds: int, scanned: bool = False) -> dict[str, Any]:
    """The real service: idle rounds and rounds with 20 large PDFs uploaded at once (`scanned`:
    20 PDFs of SCANNED_PAGES noisy 300 dpi scans each, read by OCR and indexed)."""
    if scanned:
        pages = [scans.noisy(scans.render(scans.prose(n)), n) for n in range(SCANNED_PAGES)]
        big, page_count, label = scans.image_pdf(pages), SCANNED_PAGES, "scanned PDFs are OCR'd"
    else:
        big = samples.pdf([prose(n, 500) for n in range(1_800)])  # > 5M characters of text
        page_count, label = 1_800, "PDFs are extracted"
    headers = {"Authorization": f"Bearer {KEY}"}
    run = time.strftime("%Y%m%d%H%M%S")  # a document sent again as it is would not be read again
    with demo_service(DATA / "service", KEY, "search index", quiet=True) as (base, _):
        client = httpx.Client(headers=headers, timeout=600)
        queries = iter(QUERIES * 1_000_000)

        def search() -> object:
            response = client.post(f"{base}/api/v1/search", json={"query": next(queries)})
            response.raise_for_status()
            return response

        def upload(name: str) -> int:
            with httpx.Client(headers=headers, timeout=1200) as own:
                response = own.post(
                    f"{base}/api/v1/files",
                    params={"doc_id": name, "owner": "dev"},
                    content=big,
                )
            return response.status_code

        for _ in range(20):
            search()  # warm
        idle: list[float] = []
        busy: list[float] = []
        windows = []
        loads = []
        for round_ in range(rounds):
            idle += _search_while(search, None, 20)
            with ThreadPoolExecutor(20) as pool:
                began = time.perf_counter()
                names = [f"scan-{run}-{round_}-{i}" if scanned else f"big{i}" for i in range(20)]
                futures = [pool.submit(upload, name) for name in names]
                while not all(f.done() for f in futures):
                    busy.append(timed_ms(search)[0])
                windows.append(time.perf_counter() - began)
                loads.append(results.load_average()[0])
                statuses = sorted({f.result() for f in futures})
        return {
            "pdf_pages": page_count,
            "pdf_mib": round(len(big) / 2**20, 1),
            "upload_statuses": statuses,
            "extraction_window_s": [round(w, 1) for w in windows],
            "load_1min_after_each_window": loads,
            "idle": percentiles(idle) | {"searches": len(idle)},
            f"while 20 {label}": percentiles(busy) | {"searches": len(busy)},
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["rates", "searches", "ocr-searches"])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ocr-pages", type=int, default=4, help="pages of each scanned file")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    choices: dict[str, dict[str, Callable[[], dict[str, Any]]]] = {
        "rates": {"rates": lambda: rates(args.pages, args.runs, args.ocr_pages)},
        "searches": {
            "searches_in_process": lambda: in_process(args.rounds, 10),
            "searches_over_http": lambda: over_http(args.rounds),
        },
        "ocr-searches": {"searches_while_ocr": lambda: over_http(args.rounds, scanned=True)},
    }
    parts = choices[args.what]
    for name, measure in parts.items():
        before = results.load_average(None)
        found = measure() | {"load_before": before, "load_after": results.load_average(None)}
        print(json.dumps(found, indent=1), flush=True)
        report = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        results.write_results(RESULTS, report | {name: found}, end="\n")


if __name__ == "__main__":
    main()
