"""Kept counts, facets and payloads are always the engine's current answer: every write forgets
them."""

import threading
from pathlib import Path

import qdrant_edge as qe
from qdrant_client.http import models

from app.config import Settings
from app.store.edge import EdgeStore
from app.store.engine.supervisor import Supervisor
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR
from app.store.memo import ReadMemo

TAGGED = models.Filter(must=[models.FieldCondition(key="tag", match=models.MatchValue(value="a"))])


def point(n: int, tag: str) -> models.PointStruct:
    return models.PointStruct(
        id=f"00000000-0000-0000-0000-{n:012d}",
        vector={
            DENSE_VECTOR: [1.0] + [0.0] * 383,
            SPARSE_VECTOR: models.SparseVector(indices=[n], values=[1.0]),
        },
        payload={"tag": tag, "owner": f"o{n % 2}"},
    )


def test_every_kind_of_write_changes_the_next_count_and_facet(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path, "c")
    try:
        store.upsert([point(n, "a") for n in range(3)])
        assert store.count(TAGGED) == 3
        assert store.facet("owner", TAGGED, 10) == {"o0": 2, "o1": 1}
        store.upsert([point(3, "a")])
        assert store.count(TAGGED) == 4
        assert store.facet("owner", TAGGED, 10) == {"o0": 2, "o1": 2}
        store.set_payload(
            {"tag": "b"}, models.Filter(must=[models.HasIdCondition(has_id=[point(0, "a").id])])
        )
        assert store.count(TAGGED) == 3
        assert store.facet("owner", TAGGED, 10) == {"o0": 1, "o1": 2}
        store.delete(TAGGED)
        assert store.count(TAGGED) == 0
        assert store.facet("owner", TAGGED, 10) == {}
        assert store.count() == 1
    finally:
        store.close()


def test_a_kept_payload_is_the_engines_after_every_kind_of_write(tmp_path: Path) -> None:
    """The HTTP process keeps the payloads it read (`ProcessStore.retrieve`); read again, they
    cost no call to the engine, and each kind of write makes the next read the engine's."""
    store = Supervisor(Settings(data_dir=tmp_path, collection="c"), threshold=10**9).start()
    asked: list[list[str]] = []
    send = store._send

    def counted(method: str, args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        if method == "retrieve":
            asked.append(list(args[0]))  # type: ignore[call-overload]
        return send(method, args, kwargs)

    store._send = counted  # type: ignore[method-assign]
    ids = [str(point(n, "a").id) for n in range(3)]

    def tags(keys: list[str] | None = None) -> list[tuple[str, object]]:
        return [(str(h.id), h.payload.get("tag")) for h in store.retrieve(ids, keys)]

    try:
        store.upsert([point(n, "a") for n in range(3)])
        assert tags() == [(i, "a") for i in ids]
        assert tags() == [(i, "a") for i in ids] and len(asked) == 1  # kept: no second call
        assert tags(["owner"]) == [(i, None) for i in ids] and len(asked) == 2  # other keys
        store.set_payload(
            {"tag": "b"}, models.Filter(must=[models.HasIdCondition(has_id=[ids[0]])])
        )
        assert tags() == [(ids[0], "b"), (ids[1], "a"), (ids[2], "a")]
        store.upsert([point(1, "c")])
        assert tags() == [(ids[0], "b"), (ids[1], "c"), (ids[2], "a")]
        store.delete(models.Filter(must=[models.HasIdCondition(has_id=[ids[2]])]))
        assert tags() == [(ids[0], "b"), (ids[1], "c")]
        asked.clear()
        store.retrieve(ids[:1])
        assert asked == []  # kept since the delete, while the deleted point is asked again
        store.retrieve(ids)
        assert asked == [ids[2:]]
    finally:
        store.close()


def test_an_answer_read_while_a_write_came_is_not_kept() -> None:
    memo = ReadMemo()
    reading, written = threading.Event(), threading.Event()

    def slow_read() -> int:
        reading.set()
        written.wait(5)
        return 1  # what the engine held before the write

    reader = threading.Thread(target=lambda: memo.get("k", slow_read))
    reader.start()
    reading.wait(5)
    memo.invalidate()
    written.set()
    reader.join(5)
    assert memo.get("k", lambda: 2) == 2


def test_the_oldest_answer_goes_first_when_full() -> None:
    memo = ReadMemo(size=2)
    memo.get("a", lambda: 1)
    memo.get("b", lambda: 2)
    memo.get("a", lambda: 0)  # used again: now the newest
    memo.get("c", lambda: 3)
    assert (memo.get("a", lambda: 0), memo.get("b", lambda: 0)) == (1, 0)


def test_the_count_of_every_point_is_the_engines_exact_count(tmp_path: Path) -> None:
    """Read from the segments' counters: after new points, re-sent ones, deletes, a reopen and
    an optimize, it is what an exact count of the engine says."""
    store = EdgeStore(tmp_path, "c")

    def exact() -> int:
        return int(store._shard.count(qe.CountRequest(exact=True)))

    store.upsert([point(n, "a") for n in range(30)])
    assert store.count() == exact() == 30
    store.upsert([point(n, "b") for n in range(10)])  # re-sent: new versions, old ones dropped
    assert store.count() == exact() == 30
    store.delete(models.Filter(must=[models.HasIdCondition(has_id=[point(0, "b").id])]))
    assert store.count() == exact() == 29
    store.close()
    store = EdgeStore(tmp_path, "c")
    store.optimize()
    store.upsert([point(n, "c") for n in range(40)])
    assert store.count() == exact() == 40
    store.close()
