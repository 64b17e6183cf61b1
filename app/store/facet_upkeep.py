"""The facet index of one open shard (`doc_facets`), kept exact after every write: loaded from the
snapshot the last close left (`facet_snapshot`), else read from the shard in the background (the
engine answers facets and counts until then), and after each write the points it may have
changed read back under the same write lock. A failed read-back turns it off: the engine
answers from then on."""

import logging
import shutil
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import qdrant_edge as qe
from qdrant_client.http import models

from app.store import facet_snapshot, translate
from app.store.doc_facets import MEMBERSHIP, PAYLOAD_KEYS, DocumentFacets
from app.store.layout import IndexLayout

log = logging.getLogger(__name__)
# After a crash (no snapshot) the documents are read back while searches run, a page at a
# time with a pause after each: a page holds the interpreter throughout (the engine's scroll
# holds it), and back-to-back pages of 256 kept every search waiting. Searches in the seconds
# after a start without a snapshot (docs/benchmarks.md, "Thirteenth pass"), users' 100k: p50
# 31-36 ms (p99 47-143) while the load ran (~2.5 s), against 3-9 ms (p99 5-14) with pages of 64
# and these pauses, the load then taking 2-7 s.
LOAD_PAGE = 64
LOAD_PAUSE_S = 0.0005
IDS_PAGE = 1024


def documents_in(selector: models.Filter) -> models.Filter:
    """The points of `selector` the facet index may hold a row for."""
    return models.Filter(must=[selector, *MEMBERSHIP])


class FacetUpkeep:
    def __init__(
        self, shard: qe.EdgeShard, path: Path, write_lock: threading.Lock, in_memory: bool
    ) -> None:
        """`in_memory=False` (a one-shot command): no facet index; the snapshot stays where it
        is until the store's first write, so a command that only reads (a backup), even
        killed, leaves it as it found it. The snapshot is taken before any write: it never
        outlives the state it describes."""
        self._shard = shard
        self._write_lock = write_lock
        self._closing = threading.Event()
        snapshot = IndexLayout.facet_snapshot(path)
        saved = facet_snapshot.take(snapshot) if in_memory else None
        self.facets = saved or DocumentFacets()
        self._kept_snapshot = snapshot if not in_memory and snapshot.exists() else None
        if not in_memory:
            self.facets.abandon()
        self._loader = threading.Thread(target=self._load, name="facet-index", daemon=True)
        # A restored index is numbered at once (else its first write does), so that candidates'
        # keys come from it (`DocumentFacets.payloads`); no shard read: not joined at close.
        self._numberer = threading.Thread(target=self._number, name="facet-numbers", daemon=True)

    def start(self) -> None:
        if not self.facets.loaded:
            self._loader.start()
        elif not self.facets.abandoned:
            self._numberer.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Whether facets and document counts come from memory (after the initial load, or a
        restored index's numbering)."""
        for thread in (self._loader, self._numberer):
            if thread.ident is not None:
                thread.join(timeout)
        return self.facets.ready

    def save(self, path: Path) -> bool:
        """The facet index as it is now, to `path` (under the write lock: the shard's state);
        without one, the snapshot this store kept, if it did."""
        if self._kept_snapshot is not None:
            shutil.copyfile(self._kept_snapshot, path)
            return True
        return facet_snapshot.save(self.facets, path)

    def _load(self) -> None:
        """Every stored document into the facet index, a page at a time with a pause after
        each (`LOAD_PAUSE_S`); each page is read and put under the write lock, so writes in
        between are never lost or undone."""
        request_filter = translate.filter_(models.Filter(must=list(MEMBERSHIP)))
        offset: Any = None
        try:
            while not self._closing.is_set() and not self.facets.abandoned:
                with self._write_lock:
                    if self._closing.is_set():
                        return
                    request = qe.ScrollRequest(
                        offset=offset,
                        limit=LOAD_PAGE,
                        filter=request_filter,
                        with_payload=PAYLOAD_KEYS,
                    )
                    records, offset = self._shard.scroll(request)
                    payloads = {str(r.id): dict(r.payload or {}) for r in records}
                    self.facets.refresh(payloads, payloads)
                if offset is None:
                    self.facets.loaded = True
                    return
                time.sleep(LOAD_PAUSE_S)
        except Exception:
            log.exception("facet index not loaded: facets are counted by the engine")
            self.facets.abandon()

    def _number(self) -> None:
        try:
            self.facets.number()
        except Exception:
            log.exception("facet index not numbered: the first write numbers it")

    def before_write(self, selector: models.Filter | None) -> list[str]:
        """(Under the write lock.) The ids of the documents a write selecting `selector` may
        change, listed before it runs; the snapshot a command kept is no longer the shard's
        state."""
        if self._kept_snapshot is not None:
            self._kept_snapshot.unlink(missing_ok=True)
            self._kept_snapshot = None
        if selector is None or self.facets.abandoned:
            return []
        ids: list[str] = []
        offset: Any = None
        edge_filter = translate.filter_(selector)
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=IDS_PAGE, filter=edge_filter, with_payload=False
            )
            records, offset = self._shard.scroll(request)
            ids.extend(str(r.id) for r in records)
            if offset is None:
                return ids

    def after_write(self, ids: list[str]) -> None:
        """(Under the write lock.) Read the points a write may have changed back."""
        if not ids or self.facets.abandoned:
            return
        try:
            records = self._shard.retrieve(list[int | uuid.UUID | str](ids), PAYLOAD_KEYS, False)
            payloads = {str(r.id): dict(r.payload or {}) for r in records}
            self.facets.refresh(ids, payloads)
        except Exception:
            log.exception("facet index out of step: facets are counted by the engine from now on")
            self.facets.abandon()

    def stop(self) -> None:
        """Stop the background load (before the shard closes)."""
        self._closing.set()
        if self._loader.ident is not None:
            self._loader.join()
