"""The ingest capability as the HTTP layer calls it: accept a batch or a file (and wait for it
when asked), read one document's status, delete one, purge doc types, count what is stored."""

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from app.config import Settings
from app.errors import NotFound, QueueFull
from app.extract.archive import ArchiveLimits
from app.extract.model import Extracted
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
)
from app.ingest.pipeline import Indexer
from app.ingest.purge import Purger
from app.ingest.queue import IndexQueue
from app.ingest.uploads import file_document
from app.store.fields import doc_key

MAX_WAITING_FILES = 32  # uploads waiting for an extraction worker; past it: 429


def extractor_for(settings: Settings) -> Extractor:
    limits = ArchiveLimits(settings.max_archive_bytes, settings.max_archive_entries)
    return Extractor(settings.extract_workers, settings.extract_timeout, limits)


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

    async def submit(self, batch: DocumentBatch, *, wait: bool) -> Accepted | Indexed:
        documents = batch.to_documents()
        self.queue.check_room(len(documents))
        chunks = await self._accept(documents, wait)
        if chunks is None:
            return Accepted(accepted=len(documents))
        return Indexed(indexed=len(documents), chunks=chunks)

    async def _accept(self, documents: Sequence[Document], wait: bool) -> int | None:
        """Placeholders first (the persisted promise), then the queue; with `wait`, the chunks
        written once every document is searchable (None without `wait`)."""
        jobs = await asyncio.to_thread(self.indexer.accept, documents)
        futures = [self.queue.submit(job) for job in jobs]
        if not wait:
            return None
        chunks = await asyncio.gather(*(asyncio.wrap_future(future) for future in futures))
        return sum(chunks)

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
        as a document: what is queued is the text, never the file."""
        self.queue.check_room(1)
        extracted = await self._extract(path, filename, mime_type)
        document = file_document(metadata, extracted, filename)
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

    def status(self, doc_type: str, doc_id: str) -> DocumentStatus:
        key = doc_key(doc_type, doc_id)
        status = self.indexer.status(key)
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
