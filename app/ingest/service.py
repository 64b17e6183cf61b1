"""The ingest capability as the HTTP layer calls it: accept a batch or a file (and wait for it
when asked), read one document's status, delete one, purge doc types, count what is stored."""

import asyncio
import hashlib
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.config import Settings
from app.errors import NotFound, QueueFull
from app.extract.archive import ArchiveLimits
from app.extract.model import MIME_TYPES, Extracted
from app.extract.sandbox import Extractor
from app.ingest.documents import Document, IndexCounts
from app.ingest.models import (
    Accepted,
    DocumentBatch,
    DocumentStatus,
    FileAccepted,
    FileIndexed,
    FileMetadata,
    Indexed,
    Progress,
)
from app.ingest.pipeline import Indexer
from app.ingest.purge import Purger
from app.ingest.queue import IndexQueue
from app.ingest.uploads import file_document
from app.store import fields
from app.store.fields import doc_key

FORMAT_OF_MIME = {mime: format_.value for format_, mime in MIME_TYPES.items()}
MAX_WAITING_FILES = 32  # uploads waiting for an extraction worker; past it: 429


def extractor_for(settings: Settings) -> Extractor:
    limits = ArchiveLimits(settings.max_archive_bytes, settings.max_archive_entries)
    return Extractor(settings.extract_workers, settings.extract_timeout, limits)


def file_hash(path: Path, metadata: FileMetadata, filename: str, mime_type: str | None) -> str:
    """What a file's document is made from: its bytes, its metadata, its name."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    described = metadata.model_dump_json(
        exclude={"modified_at"} if metadata.modified_at is None else None
    )
    digest.update(f"\0{described}\0{filename}\0{mime_type or ''}".encode())
    return digest.hexdigest()


def already_indexed(payload: dict[str, Any], wait: bool) -> FileAccepted | FileIndexed:
    """The answer to a file sent again exactly as it is indexed."""
    mime_type = payload.get(fields.MIME_TYPE)
    no_text = bool(payload.get(fields.NO_TEXT))
    facts: dict[str, Any] = {
        "doc_type": payload[fields.DOC_TYPE],
        "doc_id": payload[fields.DOC_ID],
        "format": FORMAT_OF_MIME.get(mime_type or "", "text"),
        "mime_type": mime_type,
        "page_count": payload.get(fields.PAGE_COUNT),
        "characters": int(payload.get(fields.CHARACTERS) or 0),
        "status": "no_text" if no_text else "indexed",
    }
    if wait:
        chunks = int(payload[fields.TOTAL_CHUNKS])
        return FileIndexed.model_validate({"indexed": 1, "chunks": chunks, **facts})
    return FileAccepted.model_validate({"accepted": 1, **facts})


class IngestService:
    def __init__(self, indexer: Indexer, queue: IndexQueue, extractor: Extractor) -> None:
        self.indexer = indexer
        self.queue = queue
        self.extractor = extractor
        self.purger = Purger(indexer)
        # Threads that only wait for the extraction workers: never the default pool's, which
        # searches use.
        self._extracting = ThreadPoolExecutor(
            extractor.workers, thread_name_prefix="astrolabe-extract"
        )
        self._waiting_files = 0
        self._reading: dict[str, FileMetadata] = {}  # uploads whose text is being read

    async def submit(self, batch: DocumentBatch, *, wait: bool) -> Accepted | Indexed:
        documents = [document.with_hash() for document in batch.to_documents()]
        self.queue.check_room(len(documents))
        chunks = await self._accept(documents, wait)
        if chunks is None:
            return Accepted(accepted=len(documents))
        return Indexed(indexed=len(documents), chunks=chunks)

    async def _accept(self, documents: Sequence[Document], wait: bool) -> int | None:
        """Placeholders first (the persisted promise), then the queue; with `wait`, the chunks
        written once every document is searchable (None without `wait`). A document indexed
        with the same content hash is acknowledged as it is: nothing is embedded again."""
        hashes = {d.key: d.content_hash for d in documents if d.content_hash}
        current = await asyncio.to_thread(self.indexer.indexed_as, hashes)
        changed = [d for d in documents if d.key not in current]
        jobs = await asyncio.to_thread(self.indexer.accept, changed) if changed else []
        futures = [self.queue.submit(job) for job in jobs]
        if not wait:
            return None
        chunks = await asyncio.gather(*(asyncio.wrap_future(future) for future in futures))
        return sum(chunks) + sum(int(p[fields.TOTAL_CHUNKS]) for p in current.values())

    async def submit_file(
        self,
        metadata: FileMetadata,
        path: Path,
        *,
        filename: str,
        mime_type: str | None,
        wait: bool,
    ) -> FileAccepted | FileIndexed:
        """Extract the file's text (in a worker process, within the time limit), then accept it
        as a document: what is queued is the text, never the file. The same bytes with the
        same metadata as the indexed version are acknowledged without extraction."""
        self.queue.check_room(1)
        key = doc_key(metadata.doc_type, metadata.doc_id)
        source = await asyncio.to_thread(file_hash, path, metadata, filename, mime_type)
        current = await asyncio.to_thread(self.indexer.indexed_as, {key: source})
        if key in current:
            return already_indexed(current[key], wait)
        self._reading[key] = metadata
        try:
            extracted = await self._extract(path, filename, mime_type)
        finally:
            self._reading.pop(key, None)
        document = replace(file_document(metadata, extracted, filename), content_hash=source)
        chunks = await self._accept([document], wait)
        facts: dict[str, Any] = {
            "doc_type": document.doc_type,
            "doc_id": document.doc_id,
            "format": extracted.format.value,
            "mime_type": extracted.mime_type,
            "page_count": extracted.page_count if extracted.has_text else None,
            "characters": len(document.content),
        }
        no_text = {"status": "no_text"} if document.no_text else {}
        if chunks is None:
            return FileAccepted.model_validate(
                {"accepted": 1, "status": "pending", **facts, **no_text}
            )
        return FileIndexed.model_validate(
            {"indexed": 1, "chunks": chunks, "status": "indexed", **facts, **no_text}
        )

    async def _extract(self, path: Path, filename: str, mime_type: str | None) -> Extracted:
        if self._waiting_files >= MAX_WAITING_FILES:
            raise QueueFull(
                f"{self._waiting_files} files are waiting to be read: retry later", retry_after=5
            )
        self._waiting_files += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                self._extracting, self.extractor.extract, path, filename, mime_type
            )
        finally:
            self._waiting_files -= 1

    def accept_one(self, document: Document) -> "Future[int]":
        """For a client on a thread of its own (the Nextcloud connector): accept one document
        (placeholder first) and queue it; QueueFull when the queue has no room."""
        self.queue.check_room(1)
        (job,) = self.indexer.accept([document])
        return self.queue.submit(job)

    def relabel(self, labels: Document) -> bool:
        """New labels (path, readers, tags, ...) for a stored document, nothing embedded."""
        return self.indexer.relabel(labels)

    def forget(self, key: str) -> None:
        """Delete a document by its key, if it is stored."""
        self.indexer.delete(key)

    def status(self, doc_type: str, doc_id: str) -> DocumentStatus:
        key = doc_key(doc_type, doc_id)
        status = self.indexer.status(key)
        extracting = self._reading.get(key)
        if extracting is not None:  # a new version's text is being read
            base = status or DocumentStatus.of(
                extracting.to_document().to_payload(), "pending", 0, None
            )
            return base.model_copy(
                update={"status": "pending", "progress": Progress(stage="extracting")}
            )
        if status is None:
            raise NotFound(f"no document {key}")
        return status

    def delete(self, doc_type: str, doc_id: str) -> None:
        key = doc_key(doc_type, doc_id)
        if not self.indexer.delete(key):
            raise NotFound(f"no document {key}")

    def purge(self, doc_types: Sequence[str]) -> dict[str, int]:
        return self.purger.purge(doc_types)

    @property
    def syncing(self) -> bool:
        """Work under way: documents waiting to be indexed, or a purge."""
        return self.queue.depth > 0 or self.purger.running

    def counts(self) -> IndexCounts:
        return self.indexer.counts()

    def close(self) -> None:
        self.extractor.close()
        self._extracting.shutdown(wait=False, cancel_futures=True)
