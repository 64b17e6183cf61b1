"""Two indexers (two service replicas) on one store: leases decide who indexes what, a replica
stopped mid-batch leaves its documents to the other once its leases expire, and whatever the
interleaving, every document ends with exactly its own chunks of its latest version."""

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from qdrant_client.http import models

from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.chunking import chunk_text
from app.ingest.leases import LeaseKeeper, Leases
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer, Job, placeholder_id
from app.store.base import Store
from app.store.edge import EdgeStore
from app.store.fields import LEASE_UNTIL
from tests.helpers import doc

LEASE = 30.0
CHUNK_WORDS = 20


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Crash(Exception):
    """The replica dies here."""


class DyingStore:
    """A replica's view of the shared store that dies on its `chunk_writes + 1`-th chunk write."""

    def __init__(self, inner: Store, chunk_writes: int) -> None:
        self._inner = inner
        self._left = chunk_writes

    def upsert(
        self, points: Sequence[models.PointStruct], condition: models.Filter | None = None
    ) -> None:
        if condition is not None:  # a chunk set (placeholders are written unconditionally)
            if self._left == 0:
                raise Crash
            self._left -= 1
        self._inner.upsert(points, condition)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class InterleavingStore(DyingStore):
    """Runs `meanwhile` just before this replica's first chunk write: another replica's work
    lands between our revision check and our write."""

    def __init__(self, inner: Store, meanwhile: Any) -> None:
        super().__init__(inner, chunk_writes=1_000)
        self._meanwhile = meanwhile

    def upsert(
        self, points: Sequence[models.PointStruct], condition: models.Filter | None = None
    ) -> None:
        if condition is not None and self._meanwhile is not None:
            meanwhile, self._meanwhile = self._meanwhile, None
            meanwhile()
        super().upsert(points, condition)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EdgeStore]:
    shared = EdgeStore(tmp_path / "data", "astrolabe")
    yield shared
    shared.close()


def replica(store: Any, owner: str, clock: Clock) -> Indexer:
    leases = Leases(store, owner, LEASE, clock)
    return Indexer(store, HashingEncoder(), Bm25Encoder(), CHUNK_WORDS, leases)


def documents(count: int, version: str = "one") -> list[dict[str, Any]]:
    return [
        doc(str(i), " ".join(f"version {version} word{j} of document {i}" for j in range(8 + i)))
        for i in range(count)
    ]


def expected_chunks(raw: list[dict[str, Any]]) -> dict[str, list[tuple[int, str]]]:
    return {
        f"note:{d['doc_id']}": list(enumerate(chunk_text(d["content"], CHUNK_WORDS))) for d in raw
    }


def chunks_by_document(store: Store) -> dict[str, list[dict[str, Any]]]:
    selector = models.Filter(
        must=[models.FieldCondition(key="kind", match=models.MatchValue(value="chunk"))]
    )
    found: dict[str, list[dict[str, Any]]] = {}
    for hit in store.scroll(selector, limit=100_000):
        found.setdefault(hit.payload["doc_key"], []).append(hit.payload)
    return found


def placeholders(store: Store) -> int:
    selector = models.Filter(
        must=[models.FieldCondition(key="kind", match=models.MatchValue(value="pending"))]
    )
    return store.count(selector)


def assert_exactly(store: Store, raw: list[dict[str, Any]]) -> None:
    """Every document holds chunks 0..n-1 of the version in `raw`, once, and nothing waits."""
    found = {
        key: sorted((c["chunk_index"], c["text"]) for c in chunks)
        for key, chunks in chunks_by_document(store).items()
    }
    assert found == expected_chunks(raw)
    assert placeholders(store) == 0


def test_a_replica_takes_over_what_a_replica_stopped_mid_batch_left(store: EdgeStore) -> None:
    clock = Clock()
    raw = documents(10)
    a = replica(DyingStore(store, chunk_writes=4), "replica-a", clock)
    b = replica(store, "replica-b", clock)
    jobs = a.accept(validate_batch(raw))
    assert b.pending_jobs() == []  # a lives: its leases hold
    assert len(a.index(jobs[:3])) == 3
    with pytest.raises(Crash):
        a.index(jobs[3:])  # a dies after one more document of this batch
    assert b.index(jobs[4:]) == {}  # a's leases have not expired yet: b must not take them
    clock.now += LEASE + 1
    orphans = b.pending_jobs(include_own=False)
    assert orphans == jobs[4:]
    assert set(b.index(orphans)) == set(jobs[4:])
    assert_exactly(store, raw)
    assert a.index(jobs[4:]) == {}  # a comes back from a pause: nothing left to do, no harm
    assert_exactly(store, raw)


def test_two_replicas_taking_over_the_same_orphans_split_them(store: EdgeStore) -> None:
    clock = Clock()
    raw = documents(24)
    jobs = replica(store, "replica-dead", clock).accept(validate_batch(raw))
    clock.now += LEASE + 1
    a, b = replica(store, "replica-a", clock), replica(store, "replica-b", clock)
    written: dict[str, dict[Job, int]] = {}

    def work(name: str, indexer: Indexer) -> None:
        written[name] = indexer.index(indexer.pending_jobs(include_own=False))

    threads = [threading.Thread(target=work, args=(n, r)) for n, r in (("a", a), ("b", b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not set(written["a"]) & set(written["b"])  # no document indexed twice
    assert set(written["a"]) | set(written["b"]) == set(jobs)
    assert_exactly(store, raw)


def test_an_old_version_written_after_a_newer_one_finished_is_taken_back(
    store: EdgeStore,
) -> None:
    clock = Clock()
    long_version = [doc("1", " ".join(f"version one word{j}" for j in range(100)))]
    short_version = [doc("1", "version two is short")]
    b = replica(store, "replica-b", clock)

    def newer_version_lands() -> None:  # between a's revision check and a's write
        b.index(b.accept(validate_batch(short_version)))

    a = replica(InterleavingStore(store, newer_version_lands), "replica-a", clock)
    assert a.index(a.accept(validate_batch(long_version))) == {}
    assert_exactly(store, short_version)


def test_a_document_deleted_while_being_indexed_stays_deleted(store: EdgeStore) -> None:
    clock = Clock()
    raw = documents(1)
    b = replica(store, "replica-b", clock)
    a = replica(InterleavingStore(store, lambda: b.delete("note:0")), "replica-a", clock)
    assert a.index(a.accept(validate_batch(raw))) == {}
    assert chunks_by_document(store) == {} and placeholders(store) == 0


def test_the_keeper_renews_leases_and_takes_over(store: EdgeStore) -> None:
    leases = Leases(store, "replica-a", seconds=0.3)
    indexer = Indexer(store, HashingEncoder(), Bm25Encoder(), CHUNK_WORDS, leases)
    indexer.accept(validate_batch(documents(1)))
    first = store.retrieve([placeholder_id("note:0")])[0].payload[LEASE_UNTIL]
    rounds = threading.Semaphore(0)
    keeper = LeaseKeeper(leases, rounds.release)
    keeper.start()
    try:
        assert rounds.acquire(timeout=5) and rounds.acquire(timeout=5)
    finally:
        keeper.stop()
    time.sleep(0)
    assert store.retrieve([placeholder_id("note:0")])[0].payload[LEASE_UNTIL] > first


def test_renewing_no_lease_writes_nothing(store: EdgeStore) -> None:
    writes: list[str] = []
    store.on_write = lambda method, _: writes.append(method)
    leases = Leases(store, "replica-a", seconds=LEASE)
    leases.renew()
    assert writes == []
    indexer = Indexer(store, HashingEncoder(), Bm25Encoder(), CHUNK_WORDS, leases)
    indexer.accept(validate_batch(documents(1)))
    writes.clear()
    leases.renew()
    assert writes == ["set_payload"]


def test_a_restarted_replica_resumes_its_own_leases_the_keeper_does_not_requeue_them(
    store: EdgeStore,
) -> None:
    clock = Clock()
    a = replica(store, "replica-a", clock)
    jobs = a.accept(validate_batch(documents(3)))
    assert a.pending_jobs(include_own=False) == []  # queued here already: not taken twice
    assert replica(store, "replica-a", clock).pending_jobs() == jobs  # same host, restarted
