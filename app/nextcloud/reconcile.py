"""What the walk found -> writes to the index, through the ingest pipeline.

A file is one document whoever sees it (the fileid is the key): its readers are merged over
every connected user whose walk saw it (each user, plus the shares on the file or a folder
above it in that user's view), its path is its owner's view when the owner is connected (else
the first holder's). A new ETag means new content: download, extract, embed. The same ETag
at a new place, or new readers or tags, means new labels only: the chunks are relabelled in
place, nothing is embedded again."""

import hashlib
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import asdict, dataclass
from typing import Any

from app.errors import QueueFull
from app.ingest.documents import Document
from app.ingest.service import IngestService
from app.nextcloud.client import NextcloudClient
from app.nextcloud.dav import DavEntry
from app.nextcloud.files import FileReader, Skipped
from app.nextcloud.ledger import Ledger, Node, WrittenDocument
from app.nextcloud.shares import Grant, readers_at

NOTES_FOLDER = "Notes"


class IndexWriter:
    """The ingest capability as the connector uses it, like any client: accept and queue
    (waiting while the queue is full: it is the backpressure), relabel in place, delete."""

    def __init__(self, ingest: IngestService, stop: threading.Event) -> None:
        self.ingest, self.stop = ingest, stop

    def write(self, document: Document) -> "Future[int]":
        while True:
            try:
                return self.ingest.accept_one(document)
            except QueueFull as full:
                if self.stop.wait(full.retry_after):
                    raise

    def relabel(self, labels: Document) -> bool:
        return self.ingest.relabel(labels)

    def delete(self, doc_key: str) -> None:
        self.ingest.forget(doc_key)


@dataclass(frozen=True)
class Facts:
    """What a file says of itself, besides where it is and who reads it."""

    owner: str
    modified_at: int
    tags: tuple[str, ...]


def content_version(entry: DavEntry) -> str:
    return entry.etag or f"{entry.modified_at}:{entry.size}"


def doc_id_of(key: str) -> str:
    """The fileid; on a server without fileids, a digest of the path key."""
    return hashlib.sha1(key.encode()).hexdigest()[:20] if key.startswith("path:") else key


def _labels_record(labels: Document) -> dict[str, Any]:
    record = asdict(labels)
    for unused in ("content", "page_starts", "sealed_pages", "no_text", "mime_type"):
        record.pop(unused)
    record["tags"], record["acl"] = list(labels.tags), list(labels.acl)
    return record


def _facts(record: dict[str, Any]) -> Facts:
    return Facts(record["owner"], int(record["modified_at"]), tuple(record["tags"]))


class Labeler:
    """A file's labels from its holders, and relabelling (or deleting) its document."""

    def __init__(
        self,
        ledger: Ledger,
        writer: IndexWriter,
        grants_of: Callable[[str], list[Grant]],
        base_url: str,
    ) -> None:
        self.ledger, self.writer, self.grants_of, self.base_url = (
            ledger,
            writer,
            grants_of,
            base_url,
        )

    def relabel(self, key: str) -> None:
        """Labels from the holders as they are now: relabelled, or deleted when no one holds
        the file any more."""
        written = next(iter(self.ledger.written_from(key)), None)
        if written is None:
            return
        holders = self.ledger.holders(key)
        if not holders:
            self.writer.delete(written.doc_key)
            self.ledger.drop_written(written.doc_key)
            return
        self.refresh(written, self.labels(key, holders, _facts(written.labels), written.labels))

    def refresh(self, written: WrittenDocument, labels: Document) -> None:
        record = _labels_record(labels)
        if record != written.labels and self.writer.relabel(labels):
            self.ledger.put_written(
                WrittenDocument(written.doc_key, written.source, written.content_version, record)
            )

    def labels(
        self,
        key: str,
        holders: list[Node],
        facts: Facts,
        keep_type_of: dict[str, Any] | None = None,
    ) -> Document:
        """The document's labels as its holders see it now. `keep_type_of`: the labels it
        was written with, whose doc type it keeps (a note moved out of Notes stays a note until
        its content changes: its key does not move under the index's feet)."""
        primary = next((h for h in holders if h.user_id == facts.owner), None) or min(
            holders, key=lambda h: h.user_id
        )
        readers: set[str] = set()
        for holder in holders:
            readers.add(f"user:{holder.user_id}")
            readers |= readers_at(holder.path, self.grants_of(holder.user_id))
        readers.discard(f"user:{facts.owner}")
        folder, _, name = primary.path.rpartition("/")
        in_notes = primary.path.startswith(NOTES_FOLDER + "/")
        doc_type = keep_type_of["doc_type"] if keep_type_of else ("note" if in_notes else "file")
        is_note = doc_type == "note" and in_notes
        fileid = None if key.startswith("path:") else key
        return Document(
            doc_type=doc_type,
            doc_id=doc_id_of(key),
            title=name,
            content="",
            owner=facts.owner,
            modified_at=facts.modified_at,
            file_path="/" + primary.path,
            tags=tuple(sorted(set(facts.tags))),
            category=(folder[len(NOTES_FOLDER) + 1 :] or None) if is_note else None,
            mime_type=None,
            acl=tuple(sorted(readers)),
            url=f"{self.base_url}/f/{fileid}" if fileid else None,
        )


class FileSink:
    """The walk's sink for one user."""

    def __init__(
        self,
        user_id: str,
        client: NextcloudClient,
        labeler: Labeler,
        reader: FileReader,
        downloads: Executor,
        root: str,
    ) -> None:
        self.user_id, self.client, self.labeler = user_id, client, labeler
        self.ledger, self.writer = labeler.ledger, labeler.writer
        self.reader, self.downloads, self.root = reader, downloads, root
        self.futures: list[Future[int]] = []
        self.pending = 0
        self._lock = threading.Lock()

    def files_changed(self, entries: list[DavEntry]) -> None:
        with self._lock:
            self.pending += len(entries)
        for done in [self.downloads.submit(self._changed, entry) for entry in entries]:
            done.result()

    def files_moved(self, nodes: list[Node]) -> None:
        for node in nodes:
            self.labeler.relabel(node.key)

    def nodes_gone(self, nodes: list[Node]) -> None:
        for node in nodes:
            self.ledger.drop_node(self.user_id, node.key)
            if not node.is_folder:
                self.labeler.relabel(node.key)

    def _changed(self, entry: DavEntry) -> None:
        try:
            self._reconcile(entry)
        finally:
            with self._lock:
                self.pending -= 1

    def _reconcile(self, entry: DavEntry) -> None:
        """Same content: new labels at most. New content: read, then written or skipped."""
        old = self.ledger.node(self.user_id, entry.key)
        version = content_version(entry)
        # The row moves first (the labels read it); its ETag follows once the file is read.
        self._place(entry, old.etag if old else None, old)
        if old is not None and old.status == "skipped" and old.etag == version:
            return  # not tried again until its ETag changes
        facts = Facts(entry.owner or self.user_id, entry.modified_at, entry.tags)
        holders = self.ledger.holders(entry.key)
        written = next(iter(self.ledger.written_from(entry.key)), None)
        if written is not None and written.content_version == version:
            labels = self.labeler.labels(entry.key, holders, facts, written.labels)
            self.labeler.refresh(written, labels)
            self._place(entry, version)
        else:
            self._read(entry, version, self.labeler.labels(entry.key, holders, facts), written)

    def _read(
        self, entry: DavEntry, version: str, labels: Document, written: WrittenDocument | None
    ) -> None:
        url_path = self.root.rstrip("/") + "/" + entry.path
        result = self.reader.read(self.client, url_path, entry, labels)
        if written is not None and (isinstance(result, Skipped) or written.doc_key != labels.key):
            self.writer.delete(written.doc_key)  # its old text is no longer the file's
            self.ledger.drop_written(written.doc_key)
        if isinstance(result, Skipped):
            self._place(entry, version, reason=result.reason)
            return
        future = self.writer.write(result)
        with self._lock:
            self.futures.append(future)
        record = _labels_record(labels)
        self.ledger.put_written(WrittenDocument(result.key, entry.key, version, record))
        self._place(entry, version)

    def _place(
        self, entry: DavEntry, etag: str | None, old: Node | None = None, reason: str | None = None
    ) -> None:
        parent = entry.path.rpartition("/")[0]
        if old is not None and old.status == "skipped" and reason is None:
            status, reason = "skipped", old.reason
        else:
            status = "skipped" if reason else "indexed"
        self.ledger.put_node(
            Node(self.user_id, entry.key, entry.path, parent, False, etag, status, reason)
        )
