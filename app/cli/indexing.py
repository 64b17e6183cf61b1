"""`astrolabe-search ingest | demo | optimize | reindex-sparse`: indexing straight into the store,
in this process (the embedded engine locks its directory: run them while `serve` is stopped),
and the HNSW graph built at the end when enough chunks are outside it."""

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from app.config import Settings

if TYPE_CHECKING:
    from app.ingest.documents import Document
    from app.store.base import Store

T = TypeVar("T")
BATCH = 32  # documents accepted and embedded at a time


def ingest(args: argparse.Namespace) -> int:
    """Every supported file under the paths, read by the extraction workers (the same as the
    HTTP upload's); a file that cannot be read is reported and skipped, a file indexed at its
    current modification time is skipped. Ends with a report per format: files read, read by
    OCR, without text, skipped and why."""
    from app.ingest.files import Refused, documents_from_files, find_files, is_current_in
    from app.ingest.service import extractor_for

    files = find_files([Path(p) for p in args.paths])
    if not files:
        print("no readable files found", file=sys.stderr)
        return 1
    extractor = extractor_for(Settings())
    refused: list[Refused] = []
    report = FormatReport()

    def documents(store: "Store") -> "Iterator[Document | None]":
        found = documents_from_files(files, args.owner, extractor, is_current_in(store))
        for file, item in zip(files, found, strict=True):
            if isinstance(item, Refused):
                refused.append(item)
                report.skipped(item.path, item.code)
                yield None
            elif item is None:  # indexed at its modification time: not read again
                report.skipped(file.path, UNCHANGED)
                yield None
            else:
                report.read(item)
                yield item

    try:
        code = _index_locally(documents, len(files), "ingest", not args.no_optimize)
    finally:
        extractor.close()
    print("\n".join(report.lines()))
    for item in refused[:20]:
        print(f"skipped {item.path}: {item.code}: {item.message}", file=sys.stderr)
    if len(refused) > 20:
        print(f"... and {len(refused) - 20} more files skipped", file=sys.stderr)
    return code


UNCHANGED = "unchanged"  # why a file was skipped: indexed at its modification time already
# A file's suffix, for a file refused before its format was known: the format it names.
_SUFFIX_FORMATS = {"md": "markdown", "markdown": "markdown", "htm": "html", "txt": "text"}


class FormatReport:
    """What `ingest` did per format: files read (of them, read by OCR wholly or in part, and
    without text), files skipped by why (the refusal's code, or `unchanged`). A skipped file's
    format is its suffix's: a refused one may never have been sniffed."""

    COLUMNS = ("read", "OCR", "no text", "skipped")

    def __init__(self) -> None:
        self.counts: dict[str, Counter[str]] = {}
        self.reasons: dict[str, Counter[str]] = {}

    def read(self, document: "Document") -> None:
        counts = self._row(self._format_of(document.mime_type))
        counts["read"] += 1
        counts["OCR"] += document.extraction in ("ocr", "mixed")
        counts["no text"] += document.no_text

    def skipped(self, path: Path, code: str) -> None:
        format = self._format_of_name(path)
        self._row(format)["skipped"] += 1
        self.reasons.setdefault(format, Counter())[code] += 1

    def lines(self) -> list[str]:
        if not self.counts:
            return []
        width = max([len("format"), len("total"), *map(len, self.counts)])
        header = "  ".join(f"{column:>7}" for column in self.COLUMNS)
        lines = [f"{'format':<{width}}  {header}  why skipped"]
        total: Counter[str] = Counter()
        for format in sorted(self.counts):
            counts = self.counts[format]
            total.update(counts)
            why = ", ".join(
                f"{code} {n}" for code, n in sorted(self.reasons.get(format, {}).items())
            )
            lines.append(f"{format:<{width}}  {self._cells(counts)}  {why}".rstrip())
        if len(self.counts) > 1:
            lines.append(f"{'total':<{width}}  {self._cells(total)}")
        return lines

    def _row(self, format: str) -> Counter[str]:
        return self.counts.setdefault(format, Counter())

    def _cells(self, counts: Counter[str]) -> str:
        return "  ".join(f"{counts[column]:>7}" for column in self.COLUMNS)

    @staticmethod
    def _format_of(mime_type: str | None) -> str:
        from app.extract.model import MIME_TYPES

        formats = {mime: format.value for format, mime in MIME_TYPES.items()}
        return formats.get(mime_type or "", mime_type or "unknown")

    @staticmethod
    def _format_of_name(path: Path) -> str:
        suffix = path.suffix.lower().removeprefix(".")
        return _SUFFIX_FORMATS.get(suffix, suffix) or "(no suffix)"


def demo(args: argparse.Namespace) -> int:
    from app.ingest.demo import demo_documents
    from app.ingest.models import MAX_BATCH, validate_batch

    raw = demo_documents()
    if not args.force and _already_indexed(raw):
        print(f"demo corpus already loaded ({len(raw)} documents); --force reloads it")
        return 0
    documents = [doc for batch in _batches(iter(raw), MAX_BATCH) for doc in validate_batch(batch)]
    return _index_locally(
        lambda _: iter(documents), len(documents), "demo corpus", not args.no_optimize
    )


def optimize(args: argparse.Namespace) -> int:
    """Merge segments and build the HNSW index of the embedded engine, offline: it blocks the
    process (GIL held) for minutes at 100k chunks, so `serve` never does it."""
    from app.store.open import Use, open_store

    store = open_store(Settings(), Use.COMMAND)
    try:
        refit_sparse(store)
        if store.vector_index() is None:
            print("no HNSW index to build: a Qdrant server builds its indexes by itself")
            return 0
        _build_graph(store)
    finally:
        store.close()
    return 0


def reindex_sparse(args: argparse.Namespace) -> int:
    """Re-encode the stored BM25 vectors with the index's live mean chunk length when it
    drifted past the bound (`--force`: in any case); then, on the embedded engine, build the
    HNSW index if the rewrite left enough chunks outside it."""
    from app.store.open import Use, open_store

    settings = Settings()
    store = open_store(settings, Use.COMMAND)
    try:
        if refit_sparse(store, force=args.force):
            optimize_if_worth_it(store, settings.hnsw_threshold, 0)
    finally:
        store.close()
    return 0


def _index_locally(
    documents: "Callable[[Store], Iterator[Document | None]]",
    total: int,
    label: str,
    optimize: bool,
) -> int:
    """Index straight into the store (no server): accept, embed, with a progress bar (one step a
    document; None: one skipped); then build the HNSW index if enough chunks are outside it
    (`optimize`)."""
    from tqdm import tqdm

    from app.embeddings.choose import open_dense_encoder
    from app.embeddings.sparse import Bm25Encoder
    from app.ingest.pipeline import Indexer
    from app.store.open import Use, open_store

    settings = Settings()
    store = open_store(settings, Use.COMMAND)
    try:
        indexer = Indexer(store, open_dense_encoder(settings), Bm25Encoder())
        indexed = chunks = outside = 0  # outside: written since the last segment's graph
        started = time.perf_counter()
        with tqdm(total=total, desc=label, unit="doc") as bar:
            for batch in _batches(documents(store), BATCH):
                found = [document for document in batch if document is not None]
                if found:
                    written = sum(indexer.index(indexer.accept(found)).values())
                    chunks, outside = chunks + written, outside + written
                indexed += len(found)
                bar.update(len(batch))
                if optimize and _build_full_segment(store):
                    outside = 0
        seconds = time.perf_counter() - started
        print(
            f"indexed {indexed} documents, {chunks} chunks in {seconds:.1f} s"
            f" ({chunks / max(seconds, 1e-9):.1f} chunks/s)"
        )
        refit_sparse(store)
        if optimize:
            optimize_if_worth_it(store, settings.hnsw_threshold, outside)
    finally:
        store.close()
    return 0


def _batches(items: Iterator[T], size: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _already_indexed(documents: list[dict[str, object]]) -> bool:
    from app.filters.selectors import documents_with_keys
    from app.store.fields import doc_key
    from app.store.open import Use, open_store

    keys = [doc_key(str(d["doc_type"]), str(d["doc_id"])) for d in documents]
    store = open_store(Settings(), Use.COMMAND)
    try:
        return store.count(documents_with_keys(keys)) == len(set(keys))
    finally:
        store.close()


def refit_sparse(store: "Store", force: bool = False) -> int:
    """`app.ingest.sparse_fit.refit` with a progress bar and one line saying what it did;
    returns the chunks re-encoded."""
    from tqdm import tqdm

    from app.ingest.sparse_fit import DRIFT_BOUND, refit

    with tqdm(desc="BM25 re-encode", unit="chunk", leave=False) as bar:
        done = refit(store, force=force, progress=bar.update)
    if done.after is None:
        print("BM25: no chunks indexed, nothing to fit")
    elif not done.reencoded:
        print(
            f"BM25: mean chunk length {done.after.avg_len:.1f} tokens, live mean"
            f" {done.live_mean:.1f} (within {DRIFT_BOUND:.0%}): sparse vectors kept"
        )
    else:
        was = f" (was {done.before.avg_len:.1f})" if done.before is not None else ""
        print(
            f"BM25: re-encoded {done.reencoded} chunks with mean chunk length"
            f" {done.after.avg_len:.1f} tokens{was}"
        )
    return done.reencoded


def optimize_if_worth_it(store: "Store", threshold: int, written: int) -> None:
    """After a bulk load: build the HNSW index once enough chunks are outside it
    (`app.store.open.graph_due`)."""
    from app.store.open import graph_due

    outside = graph_due(store, threshold, written)
    if outside is None:
        return
    print(
        f"{outside} chunks are outside the HNSW index (threshold {threshold}): building it"
        " (skip with --no-optimize)",
        flush=True,
    )
    _build_graph(store)


def _build_full_segment(store: "Store") -> bool:
    from app.store.open import build_full_segment

    started = time.perf_counter()
    if not build_full_segment(store):
        return False
    print(f"a segment is full: its HNSW index built in {time.perf_counter() - started:.1f} s")
    return True


def _build_graph(store: "Store") -> None:
    from app.store.open import build_graph

    started = time.perf_counter()
    if not build_graph(store):
        return
    index = store.vector_index()
    if index is not None:
        print(
            f"optimized in {time.perf_counter() - started:.1f} s: {index.hnsw} chunks in an HNSW"
            f" index, {index.plain} outside it"
        )
