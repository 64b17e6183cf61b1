"""The ingest capability as the HTTP layer calls it: accept a batch (and wait for it when
asked), read one document's status, delete one, count what is stored."""

import asyncio

from app.errors import NotFound
from app.ingest.models import Accepted, DocumentBatch, DocumentStatus, Indexed
from app.ingest.pipeline import IndexCounts, Indexer
from app.ingest.queue import IndexQueue
from app.store.fields import doc_key


class IngestService:
    def __init__(self, indexer: Indexer, queue: IndexQueue) -> None:
        self.indexer = indexer
        self.queue = queue

    async def submit(self, batch: DocumentBatch, *, wait: bool) -> Accepted | Indexed:
        """Placeholders first (the persisted promise), then the queue; with `wait`, the answer
        comes once every document is searchable."""
        documents = batch.to_documents()
        self.queue.check_room(len(documents))
        jobs = await asyncio.to_thread(self.indexer.accept, documents)
        futures = [self.queue.submit(job) for job in jobs]
        if not wait:
            return Accepted(accepted=len(documents))
        chunks = await asyncio.gather(*(asyncio.wrap_future(future) for future in futures))
        return Indexed(indexed=len(jobs), chunks=sum(chunks))

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

    def counts(self) -> IndexCounts:
        return self.indexer.counts()
