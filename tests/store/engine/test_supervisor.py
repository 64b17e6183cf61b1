"""The embedded engine in processes of its own (app/store/engine/supervisor.py): rebuilds and
handovers while documents keep arriving and searches keep running lose no write, never fail a
search, and leave facets and counts exact; an engine process that dies is replaced (the served
one) or abandoned (a rebuild) while the service goes on."""

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.auth import Principal
from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.filters.selectors import documents
from app.filters.spec import FilterSpec
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.search.algorithms import QueryEncoder
from app.search.service import SearchQuery, SearchService
from app.store.edge import EdgeStore
from app.store.engine import supervisor
from app.store.engine.launch import MERGED_SEGMENTS, REBUILD_SEGMENTS
from app.store.engine.supervisor import Supervisor
from app.store.engine.wire import Control
from app.store.layout import IndexLayout
from app.store.read_back import resident
from tests.helpers import doc

TAGS = ("red", "blue", "green")
READER = Principal("alice", ("eng",))


def note(n: int) -> dict[str, Any]:
    return doc(
        f"n{n}",
        f"Lantern {n} glows in garden {n % 7}. " * (1 + n % 3),
        tags=[TAGS[n % 3]],
        owner=("alice", "bob")[n % 2],
        acl=["group:eng"] if n % 4 == 0 else [],
    )


def expected_tags(written: list[int]) -> dict[str, int]:
    """Tag counts of the documents alice may read (her own and the ones shared with eng)."""
    visible = [n for n in written if n % 2 == 0 or n % 4 == 0]
    return dict(Counter(TAGS[n % 3] for n in visible))


@pytest.fixture
def fast_supervisor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supervisor, "POLL_S", 0.2)
    monkeypatch.setattr(supervisor, "RETRY_AFTER_FAILURE_S", 0.5)


@pytest.fixture
def engine(tmp_path: Path, fast_supervisor: None) -> Iterator[Supervisor]:
    running = Supervisor(Settings(data_dir=tmp_path, collection="c", hnsw_threshold=40))
    running.start()
    yield running
    running.close()


def search_service(engine: Supervisor) -> SearchService:
    return SearchService(engine.store, QueryEncoder(HashingEncoder(), Bm25Encoder()), rrf_k=60)


def write(indexer: Indexer, numbers: range) -> None:
    jobs = indexer.accept(validate_batch([note(n) for n in numbers]))
    assert len(indexer.index(jobs)) == len(jobs)


def test_rebuilds_while_writing_and_searching_lose_nothing(engine: Supervisor) -> None:
    indexer = Indexer(engine.store, HashingEncoder(), Bm25Encoder())
    service = search_service(engine)
    failures: list[BaseException] = []
    longest = 0.0
    done = threading.Event()

    def keep_searching() -> None:
        nonlocal longest
        query = SearchQuery(text="lantern garden", include_facets=True, limit=5)
        while not done.is_set():
            started = time.monotonic()
            try:
                service.search(READER, query)
            except BaseException as exc:  # every failure counts: none is expected
                failures.append(exc)
            longest = max(longest, time.monotonic() - started)

    searcher = threading.Thread(target=keep_searching)
    searcher.start()
    written: list[int] = []
    try:
        deadline = time.monotonic() + 120
        n = 0
        while engine.rebuilds < 3 and time.monotonic() < deadline:
            write(indexer, range(n, n + 10))
            written += range(n, n + 10)
            n += 10
    finally:
        done.set()
        searcher.join()
    assert engine.rebuilds >= 3, engine.last_failure
    assert failures == []
    outcome = service.search(READER, SearchQuery(include_facets=True, limit=1))
    visible = [n for n in written if n % 2 == 0 or n % 4 == 0]
    assert outcome.total_found == len(visible)
    assert outcome.facets is not None and outcome.facets["tags"] == expected_tags(written)
    assert engine.store.count(documents()) == len(written)
    index = engine.store.vector_index()
    assert index is not None and index.hnsw > 0
    engine.close()  # a rebuild still running is dropped with its copy
    generations = [p.name for p in (engine.layout.root).iterdir() if p.is_dir()]
    assert generations == [engine.layout.current().name]


def test_documents_sent_again_and_again_start_a_rebuild(engine: Supervisor) -> None:
    """Every version they replace stays in the appendable segment until a rebuild: once as many
    points were replaced as the threshold (40), one starts, though few chunks are outside the
    graph."""
    indexer = Indexer(engine.store, HashingEncoder(), Bm25Encoder())
    for version in range(20):  # 5 points a version
        batch = [doc(f"n{n}", f"Lantern {n}, version {version}.") for n in range(5)]
        jobs = indexer.accept(validate_batch(batch))
        assert len(indexer.index(jobs)) == len(jobs)
        index = engine.store.vector_index()
        assert index is not None and index.plain <= 5 < engine.threshold
    deadline = time.monotonic() + 120  # rebuilds are slow on a busy machine
    while engine.rebuilds == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert engine.rebuilds >= 1, engine.last_failure
    assert engine.store.count(documents()) == 5


def test_the_engine_counts_what_the_memory_counts_after_handovers(
    engine: Supervisor, tmp_path: Path
) -> None:
    indexer = Indexer(engine.store, HashingEncoder(), Bm25Encoder())
    for start in range(0, 150, 25):
        write(indexer, range(start, start + 25))
    deadline = time.monotonic() + 60
    while engine.rebuilds < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert engine.rebuilds >= 1
    remembered = engine.store.facet("tags", documents(), 10)
    engine.close()
    counted = EdgeStore(tmp_path, "c", facet_index=False)  # every facet from the engine
    try:
        assert counted.facet("tags", documents(), 10) == remembered
        assert remembered == dict(Counter(TAGS[n % 3] for n in range(150)))
    finally:
        counted.close()


def test_a_dead_engine_process_is_replaced_and_the_index_kept(engine: Supervisor) -> None:
    indexer = Indexer(engine.store, HashingEncoder(), Bm25Encoder())
    write(indexer, range(10))
    served = engine._served
    assert served is not None
    os.kill(served.process.pid, signal.SIGKILL)
    service = search_service(engine)
    outcome = service.search(READER, SearchQuery(limit=20))  # waits for the next engine
    assert outcome.total_found == len([n for n in range(10) if n % 2 == 0 or n % 4 == 0])
    assert engine._served is not served


def test_a_dead_rebuild_is_abandoned_and_tried_again(engine: Supervisor) -> None:
    indexer = Indexer(engine.store, HashingEncoder(), Bm25Encoder())
    write(indexer, range(60))
    deadline = time.monotonic() + 60
    while engine._rebuild is None and time.monotonic() < deadline:
        time.sleep(0.01)
    rebuild = engine._rebuild
    assert rebuild is not None, "no rebuild started"
    index = engine.store.vector_index()
    assert index is not None and set(index.engine_memory) == {"serving", "rebuild"}
    os.kill(rebuild.engine.process.pid, signal.SIGKILL)
    while engine.last_failure is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert engine.last_failure is not None
    write(indexer, range(60, 70))  # the served engine never stopped
    while engine.rebuilds < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert engine.rebuilds == 1
    assert engine.store.count(documents()) == 70
    assert search_service(engine).search(READER, SearchQuery(spec=FilterSpec())).total_found > 0


def segments(engine: Supervisor) -> int:
    return int(engine.store.call(Control.SHAPE)["segments"])


def write_and_rebuild(
    engine: Supervisor, indexer: Indexer, numbers: range, deadline: float
) -> None:
    """Write `numbers` and wait for the rebuild they make due."""
    rebuilt = engine.rebuilds
    write(indexer, numbers)
    while engine.rebuilds == rebuilt and time.monotonic() < deadline:
        time.sleep(0.05)


def test_rebuilds_keep_few_segments_and_once_writes_pause_they_are_merged_once(
    tmp_path: Path, fast_supervisor: None
) -> None:
    running = Supervisor(
        Settings(data_dir=tmp_path, collection="c", hnsw_threshold=40), merge_after_idle_s=0.5
    )
    running.start()
    try:
        indexer = Indexer(running.store, HashingEncoder(), Bm25Encoder())
        deadline = time.monotonic() + 300  # rebuilds are slow on a busy machine
        n = 0
        # Each rebuild leaves one more segment, merged past REBUILD_SEGMENTS (every segment is
        # searched on its own: 8 halved the throughput at 100k); a merge is owed past 3.
        rounds = REBUILD_SEGMENTS + 1
        for _ in range(rounds):
            write_and_rebuild(running, indexer, range(n, n + 50), deadline)
            n += 50
            assert segments(running) <= REBUILD_SEGMENTS, running.last_failure
        assert running.rebuilds >= rounds, running.last_failure
        while time.monotonic() < deadline and (
            running.rebuilding or segments(running) > MERGED_SEGMENTS + 1  # and the appendable one
        ):
            time.sleep(0.05)
        assert segments(running) <= MERGED_SEGMENTS + 1, running.last_failure
        assert running.rebuilds == rounds + 1  # and one merge
        assert running.store.count(documents()) == n
        outcome = search_service(running).search(READER, SearchQuery(include_facets=True))
        assert outcome.facets is not None
        assert outcome.facets["tags"] == expected_tags(list(range(n)))
        time.sleep(1.5)  # idle past the pause three times over: nothing more to merge
        assert running.rebuilds == rounds + 1 and not running.rebuilding
    finally:
        running.close()


def test_counts_and_facets_are_kept_until_a_write_and_exact_after_it(
    engine: Supervisor, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer = Indexer(engine.store, HashingEncoder(), Bm25Encoder())
    write(indexer, range(10))
    sent: list[str] = []
    send = engine.store._send

    def spy(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        sent.append(method)
        return send(method, args, kwargs)

    monkeypatch.setattr(engine.store, "_send", spy)
    for _ in range(3):
        assert engine.store.count(documents()) == 10
        assert engine.store.facet("tags", documents(), 10) == dict(
            Counter(TAGS[n % 3] for n in range(10))
        )
    assert sent == ["count", "facet"]  # asked the engine once each
    write(indexer, range(10, 15))
    assert engine.store.count(documents()) == 15
    assert engine.store.facet("tags", documents(), 10) == dict(
        Counter(TAGS[n % 3] for n in range(15))
    )


def _resident_pages(path: Path) -> tuple[int, int]:
    """(pages of `path` in the page cache, pages of `path`)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        pages = resident(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    return int(pages.sum()), pages.size


def test_a_stopped_engine_leaves_its_shard_in_the_page_cache(
    tmp_path: Path, fast_supervisor: None
) -> None:
    """The next start finds the files in memory instead of waiting for the disk: Qdrant
    Edge's close dropped about two thirds of them (32 % of the pages left, measured)."""
    running = Supervisor(Settings(data_dir=tmp_path, collection="c"))
    running.start()
    write(Indexer(running.store, HashingEncoder(), Bm25Encoder()), range(200))
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    for path in files:  # every page in the page cache
        path.read_bytes()
    running.close()
    counted = [_resident_pages(path) for path in files if path.exists()]
    resident, pages = sum(r for r, _ in counted), sum(p for _, p in counted)
    assert resident >= 0.9 * pages, (resident, pages)
    reopened = EdgeStore(tmp_path, "c")  # the flushed shard opens with every write
    try:
        assert reopened.count(documents()) == 200
    finally:
        reopened.close()


def test_a_merge_owed_when_the_service_stopped_is_made_after_the_next_start(
    tmp_path: Path, fast_supervisor: None
) -> None:
    settings = Settings(data_dir=tmp_path, collection="c", hnsw_threshold=40)
    first = Supervisor(settings, merge_after_idle_s=3600)  # stopped before writes pause
    first.start()
    try:
        indexer = Indexer(first.store, HashingEncoder(), Bm25Encoder())
        deadline = time.monotonic() + 300
        for n in range(0, 50 * (MERGED_SEGMENTS + 2), 50):
            write_and_rebuild(first, indexer, range(n, n + 50), deadline)
        assert segments(first) > MERGED_SEGMENTS + 1, first.last_failure
    finally:
        first.close()
    assert IndexLayout.of(tmp_path, "c").merge_owed
    second = Supervisor(settings, merge_after_idle_s=0.5)
    second.start()
    try:
        while time.monotonic() < deadline and second.rebuilds == 0:
            time.sleep(0.05)
        assert second.rebuilds == 1, second.last_failure  # the merge
        assert segments(second) <= MERGED_SEGMENTS + 1
        assert second.store.count(documents()) == 50 * (MERGED_SEGMENTS + 2)
    finally:
        second.close()
    assert not IndexLayout.of(tmp_path, "c").merge_owed
    third = Supervisor(settings, merge_after_idle_s=0.5)
    third.start()
    try:
        time.sleep(1.5)  # idle past the pause three times over: the merge was paid
        assert third.rebuilds == 0 and not third.rebuilding
    finally:
        third.close()
