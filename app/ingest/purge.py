"""Purging whole doc types (the Astrolabe app's `POST /api/v1/vector-sync/purge`), safe against a
kill at any moment. A marker point (the purge's doc types and revision) is written before
anything is deleted; each doc type then goes in one engine write, which the engine applies whole
or, after a crash, replays whole from its write-ahead log, so every document is at any moment
either fully present or fully gone; the marker goes last. A service that starts and finds a
marker finishes that purge before it indexes anything. Documents accepted after a purge began
carry a higher revision and stay."""

import logging
import threading
import uuid
from collections.abc import Sequence

from qdrant_client.http import models

from app.filters import selectors
from app.ingest.pipeline import Indexer, next_revision
from app.store import fields

log = logging.getLogger(__name__)

MAX_WAITING = 1_000_000  # placeholders of one type looked at when counting


def marker_id(revision: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"purge:{revision}"))


class Purger:
    def __init__(self, indexer: Indexer) -> None:
        self.indexer = indexer
        self.store = indexer.store
        self._running = 0
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._running > 0

    def purge(self, doc_types: Sequence[str]) -> dict[str, int]:
        """Documents removed per doc type (indexed or waiting to be)."""
        with self._lock:
            self._running += 1
        try:
            revision = next_revision()
            types = list(dict.fromkeys(doc_types))
            self.store.upsert([_marker(types, revision)])  # the intent, before any delete
            counts = {doc_type: self._count(doc_type, revision) for doc_type in types}
            self._finish(types, revision)
            return counts
        finally:
            with self._lock:
                self._running -= 1

    def resume(self) -> None:
        """Finish the purges a stopped or killed service left under way."""
        for marker in self.store.scroll(selectors.purges(), limit=1000):
            doc_types = list(marker.payload.get(fields.DOC_TYPES) or [])
            log.info("finishing a purge of %s cut short by a stop", ", ".join(doc_types))
            self._finish(doc_types, int(marker.payload[fields.REVISION]))

    def _finish(self, doc_types: Sequence[str], revision: int) -> None:
        for doc_type in doc_types:
            self.indexer.delete_where(selectors.purged(doc_type, revision))
        self.store.delete(models.Filter(must=[models.HasIdCondition(has_id=[marker_id(revision)])]))

    def _count(self, doc_type: str, revision: int) -> int:
        """Indexed documents, plus accepted ones not indexed yet (a re-sent document waiting for
        its new version is counted once)."""
        indexed = self.store.count(selectors.documents_of_type(doc_type, revision))
        waiting = list(
            self.store.facet(
                fields.DOC_KEY, selectors.placeholders_of_type(doc_type, revision), MAX_WAITING
            )
        )
        if not waiting:
            return indexed
        return indexed + len(waiting) - self.store.count(selectors.documents_with_keys(waiting))


def _marker(doc_types: list[str], revision: int) -> models.PointStruct:
    payload = {
        fields.KIND: fields.KIND_PURGE,
        fields.DOC_TYPES: doc_types,
        fields.REVISION: revision,
    }
    return models.PointStruct(id=marker_id(revision), vector={}, payload=payload)
