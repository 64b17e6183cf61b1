"""The same walker on a real third-party WebDAV server (WsgiDAV): no fileids, no folder ETags,
so every folder is listed and the files compared one by one (the full-listing fallback)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import cast

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.embeddings.dense import HashingEncoder
from app.extract.sandbox import Extractor
from app.ingest.documents import Document
from app.nextcloud.client import NextcloudClient
from app.nextcloud.dav import DavEntry
from app.nextcloud.files import FileReader, Skipped
from app.nextcloud.ledger import Ledger
from app.nextcloud.reconcile import FileSink, IndexWriter, Labeler
from app.nextcloud.walker import Walker, WalkReport
from tests.helpers import running_app
from tests.nextcloud.connector_helpers import found
from tests.nextcloud.realdav import RealDav


class CountingReader(FileReader):
    """The real reader, remembering which files it read."""

    def __init__(self, extractor: Extractor, scratch: Path, max_bytes: int) -> None:
        super().__init__(extractor, scratch, max_bytes)
        self.read_names: list[str] = []

    def read(
        self, client: NextcloudClient, url_path: str, entry: DavEntry, labels: Document
    ) -> Document | Skipped:
        self.read_names.append(entry.name)
        return super().read(client, url_path, entry, labels)


class GenericSync:
    """The connector's walk and sink over WsgiDAV, writing into a running app's index."""

    def __init__(self, app: TestClient, dav: RealDav, scratch: Path) -> None:
        services = cast(FastAPI, app.app).state.astrolabe.require_services()
        self.ledger = Ledger(scratch / "ledger.sqlite3")
        writer = IndexWriter(services.ingest, threading.Event())
        self.labeler = Labeler(self.ledger, writer, lambda uid: [], dav.url)
        self.reader = CountingReader(services.ingest.extractor, scratch / "downloads", 10**7)
        self.client = NextcloudClient(dav.url, dav.user, dav.password)
        self.pool = ThreadPoolExecutor(2)

    def walk(self) -> WalkReport:
        sink = FileSink("alice", self.client, self.labeler, self.reader, self.pool, "/")
        report = Walker(self.client, self.ledger, "alice", "/").walk(sink)
        wait(sink.futures)
        return report

    def close(self) -> None:
        self.pool.shutdown()
        self.client.close()
        self.ledger.close()


@pytest.fixture
def generic(tmp_path: Path, wsgidav: RealDav) -> Iterator[tuple[TestClient, GenericSync]]:
    with running_app(tmp_path / "data", HashingEncoder()) as app:
        sync = GenericSync(app, wsgidav, tmp_path)
        try:
            yield app, sync
        finally:
            sync.close()


def test_a_server_without_folder_etags_is_walked_in_full_and_compared_file_by_file(
    generic: tuple[TestClient, GenericSync], wsgidav: RealDav
) -> None:
    app, sync = generic
    (wsgidav.root / "a" / "b").mkdir(parents=True)
    (wsgidav.root / "a" / "b" / "deep.txt").write_text("the quartz lantern below")
    (wsgidav.root / "top.txt").write_text("the quartz mirror on top")
    (wsgidav.root / "a" / "stay.txt").write_text("unchanged")
    first = sync.walk()
    assert first.complete and first.folders_listed == 3  # /, a, a/b: nothing to skip on
    hits = found(app, "quartz", "alice")
    assert sorted(h["file_path"] for h in hits) == ["/a/b/deep.txt", "/top.txt"]

    (wsgidav.root / "a" / "b" / "deep.txt").write_text("the basalt lantern below, rewritten")
    (wsgidav.root / "top.txt").unlink()
    (wsgidav.root / "new.txt").write_text("a new basalt note")
    sync.reader.read_names.clear()
    second = sync.walk()
    assert second.complete and second.folders_listed == 3
    assert sorted(sync.reader.read_names) == ["deep.txt", "new.txt"]  # stay.txt: same ETag
    assert found(app, "quartz", "alice") == []
    assert sorted(h["file_path"] for h in found(app, "basalt", "alice")) == [
        "/a/b/deep.txt",
        "/new.txt",
    ]
