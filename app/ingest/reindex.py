"""`astrolabe-search reindex`: bring an embedded index written with other settings (model,
BM25 parameters, chunk size: `app.store.index_format`) to this release's, from the text it
stores. Every indexed document is read back from its chunks, re-chunked where the chunk size
changed, embedded again (dense and BM25) and written over its old chunks, a page of documents at
a time; the payloads stay (revisions too, so a newer version waiting as a placeholder still
wins). Accepted documents not yet indexed keep waiting: the service indexes them with its own
settings.

Resumable: a checkpoint beside `index.json` records the last page written; a run killed anywhere
starts again there (a document written twice is written the same). The new settings are
recorded only once every document is written, so until then the service keeps refusing the
index and names this command."""

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from qdrant_client.http import models

from app.config import Settings
from app.durable import write_atomically
from app.embeddings.dense import DenseEncoder
from app.embeddings.sparse import DEFAULT_AVG_LEN, Bm25Encoder
from app.extract.model import MIME_TYPES, SEALED
from app.failpoints import failpoint
from app.filters import selectors
from app.index_settings import CHUNK_WORDS, IndexSettings, changes
from app.ingest.chunking import chunk_pages
from app.ingest.documents import Document
from app.ingest.pipeline import chunk_payload, chunk_point_id
from app.ingest.sparse_fit import SparseFit, measure, read_fit, refit, write_fit
from app.store import fields
from app.store.base import Hit, Store
from app.store.open import Use, index_dir, open_store
from app.written import normalize, normalize_pages

CHECKPOINT = "reindex.json"
PAGE = 256  # points scanned per page (the documents whose first chunk is among them)


@dataclass(frozen=True)
class Reindexed:
    documents: int  # written by this run
    chunks: int
    resumed_at: int  # documents an earlier, interrupted run had written (0: a fresh start)
    changed: list[str]  # the settings that differed
    sparse_only: bool = False  # only BM25 changed: its vectors re-encoded, the dense ones kept


class Checkpoint:
    """The next page to write and the documents written so far, for one target setting."""

    def __init__(self, path: Path, target: IndexSettings) -> None:
        self.path = path
        self.target = target.to_record()

    def load(self) -> tuple[str | None, int] | None:
        """(offset, documents written) of an unfinished run towards the same settings."""
        if not self.path.exists():
            return None
        saved = json.loads(self.path.read_text(encoding="utf-8"))
        if saved.get("settings") != self.target:
            return None
        return saved["offset"], int(saved["documents"])

    def save(self, offset: str | None, documents: int) -> None:
        record = {"settings": self.target, "offset": offset, "documents": documents}
        write_atomically(self.path, json.dumps(record) + "\n")

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def _document(chunks: list[Hit]) -> Document:
    """A document as its chunks stored it: the text put back at their offsets (the gaps
    between chunks that do not overlap held only whitespace, a sentence boundary)."""
    first = chunks[0].payload
    text = [" "] * max(int(c.payload[fields.CHUNK_END]) for c in chunks)
    for chunk in chunks:
        start = int(chunk.payload[fields.CHUNK_START])
        text[start : int(chunk.payload[fields.CHUNK_END])] = chunk.payload[fields.TEXT]
    return Document(
        doc_type=first[fields.DOC_TYPE],
        doc_id=first[fields.DOC_ID],
        title=first[fields.TITLE],
        content="".join(text),
        owner=first[fields.OWNER],
        modified_at=int(first[fields.MODIFIED_AT]),
        file_path=first.get(fields.FILE_PATH),
        tags=tuple(first.get(fields.TAGS) or ()),
        category=first.get(fields.CATEGORY),
        mime_type=first.get(fields.MIME_TYPE),
        acl=tuple(first.get(fields.ACL) or ()),
    )


def _chunk_set(store: Store, key: str) -> list[Hit]:
    """The document's chunks as one version wrote them (an interrupted write may have left
    chunks of the old set past the new one's end: they are not part of it)."""
    found = sorted(
        store.scroll(selectors.chunks_of(key), limit=1_000_000),
        key=lambda hit: int(hit.payload[fields.CHUNK_INDEX]),
    )
    total = int(found[0].payload[fields.TOTAL_CHUNKS])
    return [hit for hit in found if int(hit.payload[fields.TOTAL_CHUNKS]) == total][:total]


SEALED_MIME_TYPES = frozenset(MIME_TYPES[format_] for format_ in SEALED)


def _payloads(chunks: list[Hit], chunk_words: int | None) -> list[dict[str, Any]]:
    """The payloads to write: as stored, or those of a new chunking: of the new chunk size
    (`chunk_words`), or of the text normalised where it was stored before the normalisation
    (`app.written`; pages kept)."""
    doc = _document(chunks)
    if chunk_words is None and normalize(doc.content) == doc.content:
        return [hit.payload for hit in chunks]
    text, page_starts = normalize_pages(doc.content, _page_starts(chunks))
    doc = replace(doc, content=text, title=normalize(doc.title), page_starts=page_starts)
    sealed = doc.mime_type in SEALED_MIME_TYPES
    spans = chunk_pages(text, page_starts, sealed, max_words=chunk_words or CHUNK_WORDS)
    revision = chunks[0].payload.get(fields.REVISION)
    kept = {fields.REVISION: revision} if revision is not None else {}
    return [chunk_payload(doc, i, len(spans), span) | kept for i, span in enumerate(spans)]


def _page_starts(chunks: list[Hit]) -> tuple[int, ...]:
    """Where each page starts, as the chunks tell it: exactly from their page breaks, else
    at the first chunk that starts on the page (an empty page starts where the next does)."""
    starts: dict[int, int] = {}
    for chunk in chunks:
        first, start = chunk.payload.get(fields.PAGE_NUMBER), chunk.payload.get(fields.CHUNK_START)
        if first is None or start is None:
            continue
        starts[int(first)] = min(starts.get(int(first), int(start)), int(start))
        for later, offset in enumerate(chunk.payload.get(fields.PAGE_BREAKS) or (), 1):
            page = int(first) + later
            starts[page] = min(starts.get(page, int(start) + offset), int(start) + offset)
    if not starts:
        return ()
    last = max(int(c.payload.get(fields.PAGE_END) or 0) for c in chunks)
    found, following = [], None
    for page in range(max(last, max(starts)), 0, -1):
        following = starts.get(page, following if following is not None else 0)
        found.append(following)
    found.reverse()
    found[0] = 0
    return tuple(found)


class Reindexer:
    def __init__(
        self,
        store: Store,
        dense: DenseEncoder,
        sparse: Bm25Encoder,
        rechunk: int | None,
        page: int = PAGE,
    ) -> None:
        self.page = page
        self.store = store
        self.dense = dense
        self.sparse = sparse
        self.rechunk = rechunk  # the new chunk size, where it changed

    def write_page(self, offset: str | None) -> tuple[int, int, str | None]:
        """The documents whose first chunk is in the page at `offset`: (documents, chunks,
        the next page's offset)."""
        points, next_offset = self.store.scroll_points(offset, self.page)
        firsts = [
            p
            for p in points
            if (p.payload or {}).get(fields.KIND) == fields.KIND_CHUNK
            and (p.payload or {}).get(fields.CHUNK_INDEX) == 0
        ]
        documents = [
            _payloads(_chunk_set(self.store, str((p.payload or {})[fields.DOC_KEY])), self.rechunk)
            for p in firsts
        ]
        texts = [fields.chunk_text(p) for doc in documents for p in doc]
        dense = self.dense.encode(texts)
        sparse = self.sparse.encode_documents(texts)
        at = 0
        for payloads in documents:
            self._write(payloads, dense[at : at + len(payloads)], sparse[at : at + len(payloads)])
            at += len(payloads)
        return len(documents), at, next_offset

    def _write(
        self,
        payloads: list[dict[str, Any]],
        dense: list[list[float]],
        sparse: list[models.SparseVector],
    ) -> None:
        key = str(payloads[0][fields.DOC_KEY])
        points = [
            models.PointStruct(
                id=chunk_point_id(key, i),
                vector={fields.DENSE_VECTOR: d, fields.SPARSE_VECTOR: s},
                payload=payload,
            )
            for i, (payload, d, s) in enumerate(zip(payloads, dense, sparse, strict=True))
        ]
        self.store.upsert(points)
        self.store.delete(selectors.chunks_of_from(key, len(points)))


def _sparse_encoder(store: Store, resumed: bool) -> Bm25Encoder:
    """BM25 with the corpus's mean chunk length: the one a resumed run recorded, else the live
    mean measured now (an index of 0.1.0 records none) and recorded for the service."""
    fit = read_fit(store) if resumed else None
    if fit is None:
        chunks, mean = measure(store)
        fit = SparseFit(mean or DEFAULT_AVG_LEN, chunks)
        write_fit(store, fit)
    return Bm25Encoder(fit.avg_len)


def _reencode_sparse(store: Store, target: IndexSettings, changed: list[str]) -> Reindexed:
    """Only BM25's parameters changed: the stored sparse vectors are re-encoded from the chunk
    text with the live mean (`app.ingest.sparse_fit`, resumable on its own), the dense model
    never runs. Seconds where a full reindex takes an hour per 100k chunks."""
    refitted = refit(store, force=True)
    store.record_written_with(target)
    return Reindexed(0, refitted.reencoded, 0, changed, sparse_only=True)


def reindex(
    data_dir: Path,
    collection: str,
    dense: DenseEncoder,
    force: bool = False,
    progress: Callable[[int], None] = lambda documents: None,
    page: int = PAGE,
) -> Reindexed | None:
    """Reindex the embedded index in `data_dir` (opened as it is, whatever its settings);
    None when it already matches this release's settings and no run is unfinished."""
    settings = Settings(data_dir=data_dir, collection=collection, qdrant_url=None)
    target = IndexSettings.current()
    store = open_store(settings, Use.AS_IS)
    try:
        recorded = store.written_with()
        if recorded is None:  # a Qdrant server records no settings: nothing to compare
            return None
        changed = changes(recorded, target)
        checkpoint = Checkpoint(index_dir(settings) / CHECKPOINT, target)
        saved = checkpoint.load()
        if not changed and saved is None and not force:
            return None
        if saved is None and changed and all(name.startswith("bm25.") for name in changed):
            return _reencode_sparse(store, target, changed)
        offset, before = saved if saved is not None else (None, 0)
        rechunk = target.chunk_words if recorded.chunk_words != target.chunk_words else None
        sparse = _sparse_encoder(store, resumed=saved is not None)
        reindexer = Reindexer(store, dense, sparse, rechunk, page)
        documents = chunks = 0
        while True:
            written, page_chunks, offset = reindexer.write_page(offset)
            documents, chunks = documents + written, chunks + page_chunks
            progress(written)
            if offset is None:
                break
            checkpoint.save(offset, before + documents)
            failpoint("reindexed_page")
        store.record_written_with(target)
        checkpoint.clear()
        return Reindexed(documents, chunks, before, changed)
    finally:
        store.close()
