"""The Astrolabe app's sync calls: `GET /api/v1/vector-sync/status` and `POST
/api/v1/vector-sync/purge`. A purge removes every document of its types, indexed or waiting;
a purge cut short (the service killed between two doc types) leaves each document whole or
gone, and the next start finishes it; a document accepted after the purge began stays."""

import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from qdrant_client.http import models

from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.filters import selectors
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.ingest.purge import Purger
from app.ingest.queue import IndexQueue
from app.store.base import Store
from app.store.edge import EdgeStore
from app.store.server import ServerStore
from tests.helpers import LONG, auth, doc, envelope, index, search


def test_purge_removes_its_types_and_counts_them(client: TestClient) -> None:
    index(
        client,
        *(doc(f"n{i}", LONG) for i in range(3)),
        *(doc(f"c{i}", doc_type="deck_card") for i in range(2)),
        doc("f1", doc_type="file", file_path="/a/b.md"),
    )
    response = client.post(
        "/api/v1/vector-sync/purge", json={"doc_types": ["note", "deck_card", "news_item"]},
        headers=auth(),
    )  # fmt: skip
    assert response.status_code == 200, response.text
    assert response.json() == {"purged": {"note": 3, "deck_card": 2, "news_item": 0}}
    assert [hit["doc_id"] for hit in search(client, query="", limit=100)["results"]] == ["f1"]
    assert search(client, query="lantern garden", algorithm="bm25")["results"] == []
    sync = client.get("/api/v1/vector-sync/status", headers=auth(scope="search")).json()
    assert sync == {
        "status": "idle",
        "indexed_documents": 1,
        "indexed_chunks": 1,
        "pending_documents": 0,
        "failed_documents": 0,
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"doc_types": [f"t{i}" for i in range(21)]}, "doc_types"),
        ({"doc_types": []}, "doc_types"),
        ({"doc_types": ["Bad Type"]}, "doc_types[0]"),
        ({"doc_types": ["note"], "all": True}, "all"),
    ],
)
def test_bad_purges_are_400s(app_client: TestClient, body: object, field: str) -> None:
    response = app_client.post("/api/v1/vector-sync/purge", json=body, headers=auth())
    envelope(response, 400, "invalid_request", field)
    assert search(app_client, query="")["total_found"] == 1  # nothing was purged


def test_purge_needs_scope_index_and_status_a_token(app_client: TestClient) -> None:
    purge = app_client.post(
        "/api/v1/vector-sync/purge", json={"doc_types": ["note"]}, headers=auth(scope="search")
    )
    envelope(purge, 403, "forbidden")
    envelope(app_client.get("/api/v1/vector-sync/status"), 401, "unauthenticated")
    assert search(app_client, query="")["total_found"] == 1


class CrashingStore:
    """The real store, until it 'dies' at the `crash_at`-th delete (as a kill would stop it), or
    with `before_delete` run before each delete (another request meanwhile)."""

    def __init__(self, store: EdgeStore, crash_at: int = 0) -> None:
        self._store = store
        self._deletes = 0
        self.crash_at = crash_at
        self.before_delete: list[object] = []

    def delete(self, selector: models.Filter) -> None:
        self._deletes += 1
        if self._deletes == self.crash_at:
            raise SystemExit("killed")
        for action in self.before_delete:
            action()  # type: ignore[operator]
        self._store.delete(selector)

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)


@pytest.fixture
def edge(tmp_path: Path) -> Iterator[EdgeStore]:
    store = EdgeStore(tmp_path, "astrolabe")
    yield store
    store.close()


def _indexed(indexer: Indexer, doc_type: str, count: int) -> None:
    documents = validate_batch(
        [doc(f"{doc_type}{i}", LONG, doc_type=doc_type) for i in range(count)]
    )
    indexer.index(indexer.accept(documents))


def _whole_or_gone(store: EdgeStore, doc_type: str, count: int) -> set[str]:
    """Which documents of this type are there; each must be whole (every chunk, no placeholder)."""
    present = set()
    for i in range(count):
        key = f"{doc_type}:{doc_type}{i}"
        points = store.scroll(selectors.points_of(key), limit=1000)
        if points:
            chunks = [p for p in points if p.payload.get("kind") == "chunk"]
            assert len(chunks) == len(points) == chunks[0].payload["total_chunks"], key
            present.add(key)
    return present


def test_a_purge_cut_short_leaves_documents_whole_and_the_next_start_finishes_it(
    edge: EdgeStore,
) -> None:
    for doc_type in ("note", "deck_card", "file"):
        _indexed(Indexer(edge, HashingEncoder(), Bm25Encoder()), doc_type, 5)
    crashing = CrashingStore(edge, crash_at=2)  # dies before deleting the second type
    indexer = Indexer(crashing, HashingEncoder(), Bm25Encoder())  # type: ignore[arg-type]
    with pytest.raises(SystemExit):
        Purger(indexer).purge(["note", "deck_card"])
    assert _whole_or_gone(edge, "note", 5) == set()
    assert len(_whole_or_gone(edge, "deck_card", 5)) == 5  # whole: not touched yet
    assert len(edge.scroll(selectors.purges(), limit=10)) == 1  # the marker says what is left
    queue = IndexQueue(Indexer(edge, HashingEncoder(), Bm25Encoder()))
    queue.start()  # what a restart does: the purge finishes first
    queue.stop()
    assert _whole_or_gone(edge, "deck_card", 5) == set()
    assert len(_whole_or_gone(edge, "file", 5)) == 5
    assert edge.scroll(selectors.purges(), limit=10) == []


def test_a_document_accepted_while_a_purge_runs_stays(edge: EdgeStore) -> None:
    watched = CrashingStore(edge)
    indexer = Indexer(watched, HashingEncoder(), Bm25Encoder())  # type: ignore[arg-type]
    _indexed(indexer, "note", 3)
    late = validate_batch([doc("late", "accepted during the purge")])
    other = Indexer(edge, HashingEncoder(), Bm25Encoder())  # another replica, say
    jobs: list[object] = []
    watched.before_delete.append(lambda: jobs.extend(other.accept(late)) if not jobs else None)
    assert Purger(indexer).purge(["note"]) == {"note": 3}
    assert len(jobs) == 1
    other.index(jobs)  # type: ignore[arg-type]
    assert _whole_or_gone(edge, "note", 3) == set()
    assert [h.payload["doc_id"] for h in edge.scroll(selectors.documents(), limit=10)] == ["late"]


@pytest.fixture(params=["embedded", "server"])
def either(request: pytest.FixtureRequest, edge: EdgeStore) -> Iterator[Store]:
    """The embedded engine, or qdrant-client's local mode standing in for a Qdrant server."""
    if request.param == "embedded":
        yield edge
        return
    with warnings.catch_warnings():  # local mode says payload indexes do nothing there
        warnings.filterwarnings("ignore", "Payload indexes have no effect", UserWarning)
        server = ServerStore(":memory:", None, "astrolabe")
    yield server
    server.close()


def test_waiting_documents_are_purged_and_counted_once(either: Store) -> None:
    edge = either
    indexer = Indexer(edge, HashingEncoder(), Bm25Encoder())
    _indexed(indexer, "note", 2)
    resent: Sequence[object] = indexer.accept(validate_batch([doc("note0", "new version")]))
    indexer.accept(validate_batch([doc("new", "never indexed")]))
    assert Purger(indexer).purge(["note"]) == {"note": 3}  # note0 once, note1, new
    assert indexer.index(resent) == {}  # type: ignore[arg-type]  # its placeholder is gone
    assert edge.count(selectors.placeholders()) == 0 and edge.count(selectors.chunks()) == 0


def test_sync_status_says_syncing_while_work_waits(edge: EdgeStore) -> None:
    from app.config import Settings
    from app.ingest.service import IngestService, extractor_for

    indexer = Indexer(edge, HashingEncoder(), Bm25Encoder())
    queue = IndexQueue(indexer)  # never started: what it holds waits
    ingest = IngestService(indexer, queue, extractor_for(Settings()))
    try:
        assert not ingest.syncing
        for job in indexer.accept(validate_batch([doc("w1")])):
            queue.submit(job)
        assert ingest.syncing and ingest.counts().pending == 1
    finally:
        ingest.close()
