"""A user's tick, and the connector that runs every connected user's.

A tick: the files named by webhooks first (a `Depth: 0` each), then the ETag walk (one request
when nothing changed), the user's shares when they are due (their own schedule: creating or
removing a share changes no ETag of the owner's), Deck and Calendar when due. Each user runs on
a thread of their own, so one user's failures never stall another's; downloads share one pool
(SEARCH_NEXTCLOUD_CONCURRENCY)."""

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, wait
from dataclasses import dataclass

from app.ingest.documents import Document
from app.nextcloud.apps import calendar_documents, deck_documents
from app.nextcloud.client import NextcloudClient, RequestCounter
from app.nextcloud.dav import files_root
from app.nextcloud.errors import AppMissing, NextcloudError, Revoked, Unreachable
from app.nextcloud.files import FileReader
from app.nextcloud.ledger import Ledger, WrittenDocument
from app.nextcloud.reconcile import FileSink, IndexWriter, Labeler
from app.nextcloud.shares import Grant, read_grants
from app.nextcloud.vault import Vault
from app.nextcloud.walker import Walker

log = logging.getLogger("astrolabe.nextcloud")

WAIT_FOR_INDEX = 600.0  # seconds a tick waits for what it queued to become searchable
APPS: dict[str, Callable[[NextcloudClient, str], list[Document]]] = {
    "deck": deck_documents,
    "calendar": calendar_documents,
}


@dataclass
class Schedule:
    interval: float  # seconds between two ticks
    shares_every: float  # seconds between two reads of the share lists
    apps_every: float


class UserSync:
    def __init__(
        self,
        user_id: str,
        ledger: Ledger,
        vault: Vault,
        base_url: str,
        writer: IndexWriter,
        reader: FileReader,
        downloads: Executor,
        schedule: Schedule,
        counter: RequestCounter,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.user_id, self.ledger, self.vault, self.base_url = user_id, ledger, vault, base_url
        self.writer, self.reader, self.downloads = writer, reader, downloads
        self.schedule, self.counter, self.clock = schedule, counter, clock
        self.hints: set[str] = set()
        self.force = False
        self.sink: FileSink | None = None
        self._unindexed: list[Future[int]] = []  # written by an earlier tick, not yet indexed
        self._lock = threading.Lock()

    @property
    def pending(self) -> int:
        return self.sink.pending if self.sink is not None else 0

    def hint(self, fileid: str | None, force: bool = False) -> None:
        with self._lock:
            if fileid:
                self.hints.add(fileid)
            self.force = self.force or force

    def tick(self) -> None:
        user = self.ledger.user(self.user_id)
        if user is None or user.state == "revoked":
            return
        password = self.vault.open(user.sealed_password)
        if password is None:
            self.ledger.set_user(
                self.user_id, state="failing", last_error="SEARCH_SECRET_KEY changed"
            )
            return
        client = NextcloudClient(self.base_url, user.login_name, password, self.counter)
        try:
            self._tick(client)
        except Revoked as exc:
            log.warning("nextcloud user %s: app password refused (%s)", self.user_id, exc)
            self.ledger.set_user(self.user_id, state="revoked", last_error=str(exc))
        except (NextcloudError, OSError) as exc:
            log.warning("nextcloud user %s: tick failed: %s", self.user_id, exc)
            self.ledger.set_user(self.user_id, state="failing", last_error=str(exc))
        finally:
            client.close()
            self.counter.tick()
            self.ledger.set_user(self.user_id, last_tick=self.clock())

    def _tick(self, client: NextcloudClient) -> None:
        with self._lock:
            hints, force = set(self.hints), self.force
            self.hints.clear()
            self.force = False
        user = self.ledger.user(self.user_id)
        assert user is not None
        now = self.clock()
        grants_cache: dict[str, list[Grant]] = {}
        root = files_root(self.user_id)
        labeler = Labeler(
            self.ledger, self.writer, lambda uid: self._grants(uid, grants_cache), self.base_url
        )
        sink = self.sink = FileSink(
            self.user_id, client, labeler, self.reader, self.downloads, root
        )
        walker = Walker(client, self.ledger, self.user_id, root, self.clock)
        grants_due = force or now - user.grants_read_at >= self.schedule.shares_every
        if grants_due:
            self._read_grants(client, sink, grants_cache)
        self._follow_hints(walker, sink, hints)
        report = walker.walk(sink)
        if report.new_mounts and not grants_due:  # a share was received: who else reads it
            self._read_grants(client, sink, grants_cache)
        if report.changed or hints:
            self.ledger.set_user(self.user_id, changed_since=user.changed_since or now)
        if force or now - user.apps_read_at >= self.schedule.apps_every:
            self._sync_apps(client)
        _, not_indexed = wait([*self._unindexed, *sink.futures], timeout=WAIT_FOR_INDEX)
        self._unindexed = list(not_indexed)
        if not_indexed:  # a long first index: still syncing, the lag still counting
            self.ledger.set_user(self.user_id, last_error=None)
        elif report.complete:
            self.ledger.set_user(self.user_id, state="ok", last_error=None, changed_since=None)
        else:
            error = "; ".join(report.errors[:3])
            state = "failing" if user.state != "syncing" else "syncing"
            self.ledger.set_user(self.user_id, state=state, last_error=error)

    def _grants(self, user_id: str, cache: dict[str, list[Grant]]) -> list[Grant]:
        if user_id not in cache:
            cache[user_id] = self.ledger.grants(user_id)
        return cache[user_id]

    def _read_grants(
        self, client: NextcloudClient, sink: FileSink, cache: dict[str, list[Grant]]
    ) -> None:
        try:
            grants = read_grants(client)
        except AppMissing:  # the sharing app is off: no shares to read
            grants = []
        user = self.ledger.user(self.user_id)
        self.ledger.set_user(self.user_id, grants=grants, grants_read_at=self.clock())
        cache[self.user_id] = grants
        if user is not None and grants != user.grants:
            for node in self.ledger.files(self.user_id):
                sink.labeler.relabel(node.key)

    def _follow_hints(self, walker: Walker, sink: FileSink, fileids: set[str]) -> None:
        """A `Depth: 0` look at each file a webhook named (its tags may have changed without
        any ETag moving); a file the ledger does not know is left to the walk."""
        for fileid in fileids:
            node = self.ledger.node(self.user_id, fileid)
            if node is None or node.is_folder:
                continue
            try:
                entries = walker.list(node.path, 0)
            except (AppMissing, Unreachable):
                continue
            sink.files_changed([e for e in entries if e.key == fileid and not e.is_folder])

    def _sync_apps(self, client: NextcloudClient) -> None:
        self.ledger.set_user(self.user_id, apps_read_at=self.clock())
        for app, read in APPS.items():
            source = f"app:{app}:{self.user_id}"
            try:
                documents = read(client, self.user_id)
            except Revoked:
                raise
            except AppMissing:
                continue
            except NextcloudError as exc:
                log.warning("nextcloud user %s: %s failed: %s", self.user_id, app, exc)
                continue
            self._write_app_documents(source, documents)

    def _write_app_documents(self, source: str, documents: list[Document]) -> None:
        before = {w.doc_key: w for w in self.ledger.written_from(source)}
        for document in documents:
            version = hashlib.sha1(
                json.dumps(document.to_payload(), sort_keys=True).encode()
            ).hexdigest()
            old = before.pop(document.key, None) or self.ledger.written(document.key)
            if old is None or old.content_version != version:
                self.writer.write(document)
                self.ledger.put_written(WrittenDocument(document.key, source, version, {}))
        for gone in before:
            self.writer.delete(gone)
            self.ledger.drop_written(gone)
