"""The handover protocol of app/store/engine.py, in one process: a copy made at one moment of the
served shard's writes, the journal of the writes after it, the seal that holds new writes, the
copy replaying exactly to the sealed end, and retirement answering the held writes Moved."""

import inspect
import os
import pickle
import threading
from pathlib import Path

import pytest
from qdrant_client.http import models

from app.filters.selectors import documents, of_document
from app.store import fields
from app.store.base import Hit, Store
from app.store.edge import EdgeStore
from app.store.engine.process_store import ProcessStore
from app.store.engine.shard_server import ShardServer, at_niceness
from app.store.engine.wire import (
    CONTROLS,
    COPIES,
    READS,
    STORE_CALLS,
    WRITES,
    Call,
    Control,
    HitColumns,
    Moved,
    failure_of,
    packed,
    raise_failure,
    unpacked,
)
from app.store.errors import CopyFailed, StoreError
from app.store.layout import IndexLayout
from tests.store.test_doc_facets import point

DOC = {
    "doc_type": "note",
    "owner": "alice",
    "acl": [],
    "modified_at": 100,
    "folder": "/A",
    "tags": ["red"],
    "category": "Work",
}


def upsert(engine: ShardServer, n: int, **changes: object) -> None:
    engine.answer(Call("upsert", ([point(f"note:{n}", 0, DOC | changes)],)))


def contents(store: EdgeStore) -> list[tuple[str, object]]:
    hits = store.scroll(models.Filter(must=[documents()]), limit=1000)
    return sorted((hit.id, hit.payload) for hit in hits)


def test_a_start_reads_nothing_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its open reads what searches read; a read-back slowed the first seconds at 1M."""
    served = ShardServer(EdgeStore(tmp_path, "c"), threading.Event())
    asked: list[str] = []
    monkeypatch.setattr(served.store, "read_back", lambda: asked.append("read_back"))
    served.prepare(None)
    served.close()
    assert asked == []


def test_the_copy_replays_exactly_to_the_sealed_end(tmp_path: Path) -> None:
    served = ShardServer(EdgeStore(tmp_path, "c"), threading.Event())
    assert served.store.wait_for_facet_index(timeout=30)  # else the copy has no snapshot to take
    copy = IndexLayout.of(tmp_path, "c").next_generation()
    for n in range(3):
        upsert(served, n)
    served.answer(Call(Control.START_COPY, (str(copy),)))
    upsert(served, 3, tags=["blue"])
    served.answer(Call("delete", (models.Filter(must=[of_document("note:0")]),)))
    served.answer(
        Call("set_payload", ({fields.TAGS: ["green"]}, models.Filter(must=[of_document("note:1")])))
    )
    rebuilt = ShardServer(EdgeStore(tmp_path, "c", shard=copy), threading.Event())
    assert rebuilt.store.wait_for_facet_index(timeout=0)  # the copy's snapshot, no read-back
    assert served.answer(Call(Control.SEAL)) == 3
    held: list[BaseException] = []

    def write_while_sealed() -> None:
        try:
            upsert(served, 9)
        except BaseException as exc:
            held.append(exc)

    writer = threading.Thread(target=write_while_sealed)
    writer.start()
    writer.join(timeout=0.3)
    assert writer.is_alive(), "a write went through the seal"
    rebuilt.replay_from(IndexLayout.journal(copy))
    assert rebuilt.answer(Call(Control.FINISH, (3,))) == 3
    assert contents(rebuilt.store) == contents(served.store)
    for key in ("tags", "owner"):
        assert rebuilt.store.facet(key, documents(), 10) == served.store.facet(key, documents(), 10)
    served.answer(Call(Control.RETIRE))
    writer.join(timeout=10)
    assert len(held) == 1 and isinstance(held[0], Moved)
    with pytest.raises(Moved):
        served.answer(Call("count", ()))
    assert served.store.count(documents()) == 3  # the held write was never applied
    served.close()
    rebuilt.close()


def test_a_journal_shorter_than_the_sealed_end_fails_the_handover(tmp_path: Path) -> None:
    served = ShardServer(EdgeStore(tmp_path, "c"), threading.Event())
    copy = IndexLayout.of(tmp_path, "c").next_generation()
    served.answer(Call(Control.START_COPY, (str(copy),)))
    upsert(served, 1)
    rebuilt = ShardServer(EdgeStore(tmp_path, "c", shard=copy), threading.Event())
    rebuilt.replay_from(IndexLayout.journal(copy))
    with pytest.raises(StoreError, match="1 of 2 records"):
        rebuilt.answer(Call(Control.FINISH, (2,)))
    served.close()
    rebuilt.close()


def niceness_of_this_thread() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_a_rebuild_runs_niced_and_the_threads_that_answer_calls_do_not() -> None:
    """A rebuilt copy becomes the served engine: its later threads must keep the caller's
    priority (a process-wide nice had left every search after a handover at niceness 10)."""
    caller = niceness_of_this_thread()
    seen: list[int] = []
    at_niceness(caller + 5, lambda: seen.append(niceness_of_this_thread()))
    assert seen == [caller + 5]
    assert niceness_of_this_thread() == caller
    started: list[int] = []
    later = threading.Thread(target=lambda: started.append(niceness_of_this_thread()))
    later.start()
    later.join()
    assert started == [caller]


def test_a_failing_rebuild_fails_in_the_callers_thread() -> None:
    def fail() -> None:
        raise StoreError("optimize failed")

    with pytest.raises(StoreError, match="optimize failed"):
        at_niceness(1, fail)


def test_the_wire_carries_exactly_the_store_protocol() -> None:
    """Every `Store` method crosses the wire (and only they, beside the control calls), and the
    store that speaks it implements each: a method added on one side only fails here."""
    protocol = {
        name
        for name, _ in inspect.getmembers(Store, inspect.isfunction)
        if not name.startswith("_")
    } - {"close"}
    assert protocol == STORE_CALLS
    assert not STORE_CALLS & CONTROLS
    assert READS.isdisjoint(WRITES) and COPIES.isdisjoint(READS | WRITES)
    for name in protocol:
        assert name in vars(ProcessStore), f"ProcessStore does not send {name}"
        assert name in vars(EdgeStore), f"a shard server's EdgeStore does not answer {name}"


@pytest.mark.parametrize("error", [ValueError("boom"), CopyFailed("no snapshots"), Moved()])
def test_an_error_crosses_the_wire_as_the_store_error_it_was(error: Exception) -> None:
    failure = failure_of(error)
    expected = StoreError if isinstance(error, ValueError) else type(error)
    with pytest.raises(expected) as raised:
        raise_failure(failure)
    if isinstance(error, ValueError):  # anything else: a 500 whose message the log keeps
        assert str(raised.value.args[0]) == "ValueError: boom"


HITS = [Hit("a", 0.9, {}), Hit("b", 0.5, {"title": "B", "tags": ["red"]})]


@pytest.mark.parametrize(
    "reply",
    [HITS, [HITS, [], HITS[1:]], (HITS, "b"), ([], None), [], 7, {"tag": 3}, None],
    ids=[
        "hits",
        "a batch's",
        "a page and its offset",
        "an empty page",
        "none",
        "a count",
        "facets",
        "nothing",
    ],
)
def test_an_answer_crosses_the_wire_as_it_was_with_hits_as_columns(reply: object) -> None:
    sent = packed(reply)
    assert not repr(sent).count("Hit(")  # no hit crosses one at a time
    received = unpacked(pickle.loads(pickle.dumps(sent)))
    assert received == reply and type(received) is type(reply)
    if reply == HITS:
        assert isinstance(sent, HitColumns) and isinstance(received, list)
        assert all(type(hit) is Hit for hit in received)
