"""Placeholders first, then chunk -> embed (dense + BM25) -> replace the document's point set."""

import os
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qdrant_client.http import models

from app.embeddings.dense import DenseEncoder
from app.embeddings.sparse import Bm25Encoder
from app.filters import selectors
from app.filters.spec import folder_ancestors
from app.index_settings import CHUNK_WORDS
from app.ingest.chunking import Chunk, chunk_pages
from app.ingest.documents import Document, IndexCounts, with_labels
from app.ingest.leases import Leases
from app.ingest.models import DocumentStatus, Progress
from app.ingest.sparse_fit import fitted_encoder
from app.store import fields
from app.store.base import Hit, Store
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR, embedded_text

_last_revision = 0
_revision_lock = threading.Lock()


def next_revision() -> int:
    """Wall-clock microseconds, strictly increasing in this process: a later accept on any
    replica (clocks in sync) gets a higher revision. Microseconds, not nanoseconds, so that a
    revision stays exact in the engine's float ranges (below 2**53)."""
    global _last_revision
    with _revision_lock:
        _last_revision = max(_last_revision + 1, time.time_ns() // 1000)
        return _last_revision


# Texts per model call, what a stop request may have to wait for (~1 s). Two batches of 8 for
# each bulk embedding thread (one a core): a slice of one batch kept one core idle (ingest at
# 49 % of the model's rate on 2 cores; 88-91 % with one batch a core, 92-94 % with two).
EMBED_SLICE = 16 * (os.cpu_count() or 1)


def chunk_point_id(doc_key: str, index: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{doc_key}:chunk:{index}"))


def placeholder_id(doc_key: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{doc_key}:placeholder"))


@dataclass(frozen=True)
class Job:
    """One accepted version of one document, identified by its placeholder's revision."""

    doc_key: str
    revision: int


Prepared = tuple[Job, Document, list[Chunk]]  # a job, its document and its chunks


def placeholder_point(doc: Document, revision: int, error: str | None = None) -> models.PointStruct:
    payload = {
        fields.KIND: fields.KIND_PENDING,
        fields.DOC_KEY: doc.key,
        fields.DOC_TYPE: doc.doc_type,
        fields.DOC_ID: doc.doc_id,
        fields.MODIFIED_AT: doc.modified_at,
        fields.REVISION: revision,
        fields.STATUS: fields.STATUS_FAILED if error else fields.STATUS_PENDING,
        fields.ERROR: error,
        fields.DOCUMENT: doc.to_payload(),
    }
    return models.PointStruct(id=placeholder_id(doc.key), vector={}, payload=payload)


def label_payload(doc: Document) -> dict[str, Any]:
    """What a document's chunks say about it besides their text: changed in place by
    `Indexer.relabel` (a move, a share) without embedding anything again."""
    is_file = doc.doc_type == "file" and doc.file_path is not None
    folders = folder_ancestors(doc.file_path) if is_file and doc.file_path else []
    return {
        fields.READERS: [f"user:{doc.owner}", *doc.acl],
        fields.TITLE: doc.title,
        fields.OWNER: doc.owner,
        fields.ACL: list(doc.acl),
        fields.MODIFIED_AT: doc.modified_at,
        fields.FILE_PATH: doc.file_path,
        fields.FOLDERS: folders,
        fields.DIRECTORIES: folders[:-1],
        fields.TOP_FOLDER: folders[1] if len(folders) > 1 else None,  # the chip that selects it
        fields.TAGS: list(doc.tags),
        fields.CATEGORY: doc.category,
        fields.URL: doc.url,
    }


def chunk_payload(doc: Document, index: int, total: int, chunk: Chunk) -> dict[str, Any]:
    return {
        fields.KIND: fields.KIND_CHUNK,
        fields.DOC_KEY: doc.key,
        fields.DOC_TYPE: doc.doc_type,
        fields.DOC_ID: doc.doc_id,
        fields.TEXT: chunk.text,
        fields.CHUNK_START: chunk.start,
        fields.CHUNK_END: chunk.end,
        fields.CHUNK_INDEX: index,
        fields.TOTAL_CHUNKS: total,
        **label_payload(doc),
        fields.MIME_TYPE: doc.mime_type,
        fields.PAGE_NUMBER: chunk.page_number,
        fields.PAGE_END: chunk.page_end,
        fields.PAGE_BREAKS: list(chunk.page_breaks) or None,
        fields.PAGE_COUNT: len(doc.page_starts) if chunk.page_number is not None else None,
        fields.NO_TEXT: doc.no_text,
        fields.EXTRACTION: doc.extraction,
        fields.CONTENT_HASH: doc.content_hash,
        fields.CHARACTERS: len(doc.content),
    }


def _spans(sizes: list[tuple[str, int]]) -> list[tuple[str, int, int]]:
    """(key, where its chunks start among all the texts, how many)."""
    spans, start = [], 0
    for key, count in sizes:
        spans.append((key, start, count))
        start += count
    return spans


def _disk_estimate(doc: Document) -> int:
    """Bytes a document may take on disk once indexed: its text in the placeholder and in the
    chunks (write-ahead log and segments), vectors and payload per chunk."""
    text = len(doc.content.encode()) + len(doc.title.encode())
    return 8 * text + 16 * 1024


class Indexer:
    """Writes documents: placeholders on accept, chunk sets once embedded. One writer lock keeps
    accept, index and delete of the same document from interleaving."""

    def __init__(
        self,
        store: Store,
        dense: DenseEncoder,
        sparse: Bm25Encoder,
        chunk_words: int = CHUNK_WORDS,
        leases: Leases | None = None,
    ) -> None:
        self.store = store
        self.dense = dense
        self.sparse = sparse
        self.chunk_words = chunk_words
        self.leases = leases or Leases(store)
        self._lock = threading.Lock()
        self.embedding: dict[str, tuple[int, int]] = {}  # key -> (chunks embedded, chunks)

    def indexed_as(self, hashes: Mapping[str, str]) -> dict[str, dict[str, Any]]:
        """Of these documents (key -> content hash), those indexed with that hash and not
        waiting for a newer version: their first chunk's payload, by key."""
        ids = [p for key in hashes for p in (chunk_point_id(key, 0), placeholder_id(key))]
        found = self.store.retrieve(ids) if ids else []
        waiting = {  # a placeholder: a newer version is on its way
            h.payload.get(fields.DOC_KEY)
            for h in found
            if h.payload.get(fields.KIND) == fields.KIND_PENDING
        }
        return {
            key: hit.payload
            for hit in found
            if hit.payload.get(fields.KIND) == fields.KIND_CHUNK
            and (key := str(hit.payload[fields.DOC_KEY])) in hashes
            and hit.payload.get(fields.CONTENT_HASH) == hashes[key]
            and key not in waiting
        }

    def accept(self, documents: Sequence[Document]) -> list[Job]:
        latest = {doc.key: doc.with_hash() for doc in documents}  # a batch's last copy wins
        jobs = [Job(key, next_revision()) for key in latest]
        points = [placeholder_point(latest[job.doc_key], job.revision) for job in jobs]
        for point in points:  # leased from the start: no other replica takes it while we live
            point.payload = (point.payload or {}) | self.leases.stamp()
        self.store.ensure_room(sum(_disk_estimate(doc) for doc in latest.values()))
        with self._lock:
            self.store.upsert(points)
        return jobs

    def pending_jobs(self, include_own: bool = True) -> list[Job]:
        """Accepted documents not yet indexed that this replica now holds the lease of: at
        start-up its own and the orphaned ones; later (`include_own=False`) orphans only."""
        found = self.store.scroll(self.leases.takeable(include_own), limit=10_000_000)
        self.leases.claim([h.id for h in found], include_own)
        held = self.store.retrieve([h.id for h in found]) if found else []
        jobs = [
            Job(h.payload[fields.DOC_KEY], int(h.payload[fields.REVISION]))
            for h in held
            if self.leases.holds(h) and h.payload.get(fields.KIND) == fields.KIND_PENDING
        ]
        return sorted(jobs, key=lambda job: job.revision)

    def index(self, jobs: Sequence[Job], stop: threading.Event | None = None) -> dict[Job, int]:
        """Embed and write these jobs; returns chunks written per job (superseded jobs: absent).
        Texts are embedded in slices across documents, and each document is written as soon as
        its chunks are: `stop` is looked at between slices, and the documents left stay pending
        (their placeholders are the promise a restart keeps)."""
        prepared = [(job, doc, self._chunks(doc)) for job, doc in self._current(jobs)]
        texts = [
            embedded_text(doc.title, chunk.text) for _, doc, chunks in prepared for chunk in chunks
        ]
        bm25 = fitted_encoder(self.store, self.sparse, texts)
        dense: list[list[float]] = []
        sparse: list[models.SparseVector] = []
        written: dict[Job, int] = {}
        first = 0  # where the next document's chunks start in `texts`
        waiting = iter(prepared)
        item = next(waiting, None)
        spans = _spans([(doc.key, len(chunks)) for _, doc, chunks in prepared])
        try:
            for start in range(0, len(texts), EMBED_SLICE):
                if stop is not None and stop.is_set():
                    break
                dense += self.dense.encode(texts[start : start + EMBED_SLICE])
                sparse += bm25.encode_documents(texts[start : start + EMBED_SLICE])
                self._note_progress(spans, len(dense))
                first, item = self._write_ready(item, waiting, first, dense, sparse, written)
        finally:
            for key, _, _ in spans:
                self.embedding.pop(key, None)
        return written

    def _note_progress(self, spans: list[tuple[str, int, int]], done: int) -> None:
        for key, start, count in spans:
            if start < done < start + count:
                self.embedding[key] = (done - start, count)

    def _write_ready(
        self,
        item: "Prepared | None",
        waiting: "Iterator[Prepared]",
        first: int,
        dense: list[list[float]],
        sparse: list[models.SparseVector],
        written: dict[Job, int],
    ) -> "tuple[int, Prepared | None]":
        """Write each document whose chunks are all embedded; where the next one starts."""
        while item is not None and first + len(item[2]) <= len(dense):
            job, doc, chunks = item
            points = [
                models.PointStruct(
                    id=chunk_point_id(doc.key, i),
                    vector={DENSE_VECTOR: dense[first + i], SPARSE_VECTOR: sparse[first + i]},
                    payload=chunk_payload(doc, i, len(chunks), chunk)
                    | {fields.REVISION: job.revision},
                )
                for i, chunk in enumerate(chunks)
            ]
            if self._replace(job, points):
                written[job] = len(points)
            first += len(chunks)
            item = next(waiting, None)
        return first, item

    def fail(self, job: Job, error: str) -> None:
        with self._lock:
            doc = self._placeholder_document(job)
            if doc is not None:
                self.store.upsert([placeholder_point(doc, job.revision, error=error)])

    def delete(self, doc_key: str) -> bool:
        with self._lock:
            selector = selectors.points_of(doc_key)
            if self.store.count(selector) == 0:
                return False
            self.store.delete(selector)
            return True

    def relabel(self, labels: Document) -> bool:
        """Give a document the labels (title, owner, readers, path, tags, category, link,
        date) of `labels`, keeping its text and vectors; a version still waiting to be indexed
        gets them too. False when no such document is stored."""
        with self._lock:
            waiting = self.store.retrieve([placeholder_id(labels.key)])
            if waiting:
                revision = int(waiting[0].payload.get(fields.REVISION, 0))
                queued = Document.from_payload(waiting[0].payload[fields.DOCUMENT])
                relabelled = with_labels(queued, labels)
                self.store.set_payload(
                    {fields.DOCUMENT: relabelled.to_payload()},
                    selectors.placeholder_of(labels.key, revision),
                )
            elif self.store.count(selectors.chunks_of(labels.key)) == 0:
                return False
            self.store.set_payload(label_payload(labels), selectors.chunks_of(labels.key))
            return True

    def delete_where(self, selector: models.Filter) -> None:
        """Every point matching `selector`, in one write (each document whole or not at all)."""
        with self._lock:
            self.store.delete(selector)

    def _chunks(self, doc: Document) -> list[Chunk]:
        if not doc.content.strip():  # indexed by its title, on no page
            return chunk_pages(doc.title, (), False, max_words=self.chunk_words)
        return chunk_pages(
            doc.content, doc.page_starts, doc.sealed_pages, max_words=self.chunk_words
        )

    def _current(self, jobs: Sequence[Job]) -> list[tuple[Job, Document]]:
        """The jobs still current whose lease this replica holds (taken now if it is free)."""
        ids = [placeholder_id(job.doc_key) for job in jobs]
        self.leases.claim(ids)
        found = {h.payload[fields.DOC_KEY]: h for h in self.store.retrieve(ids)}
        current = []
        for job in jobs:
            hit = found.get(job.doc_key)
            if hit is not None and self._is_revision(hit, job) and self.leases.holds(hit):
                current.append((job, Document.from_payload(hit.payload[fields.DOCUMENT])))
        return current

    @staticmethod
    def _is_revision(hit: Hit, job: Job) -> bool:
        return int(hit.payload.get(fields.REVISION, -1)) == job.revision

    def _placeholder_document(self, job: Job) -> Document | None:
        hits = self.store.retrieve([placeholder_id(job.doc_key)])
        if not hits or not self._is_revision(hits[0], job):
            return None
        return Document.from_payload(hits[0].payload[fields.DOCUMENT])

    def _replace(self, job: Job, points: list[models.PointStruct]) -> bool:
        """Upsert the new chunk set, drop chunks past its end, then the placeholder: at no moment
        is the document missing, and no chunk of the old version survives.

        Another replica may accept, index or delete the same document meanwhile (this lock is
        per process), so the writes check the revision inside the engine: a chunk is only
        replaced by one of the same or a newer revision, and if the placeholder is gone once our
        chunks are written (deleted, or a newer version finished first) they are taken back."""
        with self._lock:
            waiting = self._placeholder(job)
            if waiting is None or not self.leases.holds(waiting):
                return False  # deleted, re-sent or taken over meanwhile
            self.store.upsert(points, condition=selectors.revision_at_most(job.revision))
            self.store.delete(
                selectors.older_chunks_of_from(job.doc_key, len(points), job.revision)
            )
            if self._placeholder(job) is None:
                self.store.delete(selectors.chunks_of_revision(job.doc_key, job.revision))
                return False
            self.store.delete(selectors.placeholder_of(job.doc_key, job.revision))
            return True

    def _placeholder(self, job: Job) -> Hit | None:
        hits = self.store.retrieve([placeholder_id(job.doc_key)])
        return hits[0] if hits and self._is_revision(hits[0], job) else None

    def status(self, doc_key: str) -> DocumentStatus | None:
        """Where one document stands; None if it is unknown."""
        placeholder = placeholder_id(doc_key)
        found = self.store.retrieve([placeholder, chunk_point_id(doc_key, 0)])
        if not found:
            return None
        chunks = self.store.count(selectors.chunks_of(doc_key))
        waiting = next((hit for hit in found if hit.id == placeholder), None)
        if waiting is None:
            indexed = fields.STATUS_NO_TEXT if found[0].payload.get(fields.NO_TEXT) else "indexed"
            return DocumentStatus.of(found[0].payload, indexed, chunks, None)
        status = DocumentStatus.of(
            waiting.payload[fields.DOCUMENT],
            waiting.payload.get(fields.STATUS, fields.STATUS_PENDING),
            chunks,
            waiting.payload.get(fields.ERROR),
        )
        if status.status != fields.STATUS_PENDING:
            return status
        embedded = self.embedding.get(doc_key)
        progress = (
            Progress(stage="embedding", chunks_embedded=embedded[0], chunks_total=embedded[1])
            if embedded
            else Progress(stage="queued")
        )
        return status.model_copy(update={"progress": progress})

    def counts(self) -> IndexCounts:
        return IndexCounts(
            documents=self.store.count(selectors.documents()),
            chunks=self.store.count(selectors.chunks()),
            pending=self.store.count(selectors.pending()),
            failed=self.store.count(selectors.failed()),
        )
