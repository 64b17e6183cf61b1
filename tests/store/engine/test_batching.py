"""Searches waiting for the engine go to it in one call, and each gets its own answers."""

import random
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from qdrant_client.http import models

from app.store.base import Hit, Query
from app.store.edge import EdgeStore
from app.store.engine.batching import SearchBatcher
from app.store.engine.turnstile import Turnstile
from app.store.errors import StoreError
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR, TAGS
from tests.store.engine.test_turnstile import wait_until

BAD = 13  # a query with this limit fails the fake engine's call


def _wait_for_waiting(batcher: SearchBatcher, count: int) -> None:
    wait_until(lambda: batcher.waiting == count)


class FakeEngine:
    """Answers each query with one hit named after its limit; records every call."""

    def __init__(self) -> None:
        self.calls: list[list[int]] = []

    def query_batch(self, queries: Sequence[Query]) -> list[list[Hit]]:
        limits = [q.limit for q in queries]
        self.calls.append(limits)
        if BAD in limits:
            raise ValueError("a bad search")
        return [[Hit(str(limit), 0.0, {})] for limit in limits]


def search(*limits: int) -> list[Query]:
    return [Query(query=None, limit=limit) for limit in limits]


def ask_together(
    batcher: SearchBatcher, reads: Turnstile, searches: list[list[Query]]
) -> list[object]:
    """Each search from a thread of its own, all waiting before the engine is free."""
    results: list[object] = [None] * len(searches)

    def ask(n: int) -> None:
        try:
            results[n] = batcher.query_batch(searches[n])
        except BaseException as exc:  # an interrupted call's too
            results[n] = exc

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(len(searches))]
    with reads.turn():  # the engine is busy: every search waits
        for count, thread in enumerate(threads, start=1):
            thread.start()
            _wait_for_waiting(batcher, count)
    for thread in threads:
        thread.join(timeout=10)
        assert not thread.is_alive()
    return results


def test_searches_that_waited_are_asked_in_one_call() -> None:
    engine, reads = FakeEngine(), Turnstile()
    batcher = SearchBatcher(reads, engine.query_batch)
    searches = [search(n, 100 + n) for n in range(6)]
    results = ask_together(batcher, reads, searches)
    assert engine.calls == [[limit for s in searches for limit in (s[0].limit, s[1].limit)]]
    for n, result in enumerate(results):
        assert result == [[Hit(str(n), 0.0, {})], [Hit(str(100 + n), 0.0, {})]]
    assert batcher.waiting == 0


def test_a_failing_search_fails_alone() -> None:
    engine, reads = FakeEngine(), Turnstile()
    batcher = SearchBatcher(reads, engine.query_batch)
    results = ask_together(batcher, reads, [search(1), search(BAD, 2), search(3)])
    assert isinstance(results[1], ValueError)
    assert results[0] == [[Hit("1", 0.0, {})]]
    assert results[2] == [[Hit("3", 0.0, {})]]
    assert engine.calls == [[1, BAD, 2, 3], [1], [BAD, 2], [3]]


def test_a_search_that_comes_during_a_call_leads_the_next() -> None:
    reads = Turnstile()
    calls: list[list[int]] = []
    later_arrived = threading.Event()
    batcher: SearchBatcher

    def slow_engine(queries: Sequence[Query]) -> list[list[Hit]]:
        calls.append([q.limit for q in queries])
        if len(calls) == 1:  # the second search arrives while this call runs
            threading.Thread(target=lambda: later.append(batcher.query_batch(search(2)))).start()
            _wait_for_waiting(batcher, 1)
            later_arrived.set()
        return [[Hit(str(q.limit), 0.0, {})] for q in queries]

    later: list[list[list[Hit]]] = []
    batcher = SearchBatcher(reads, slow_engine)
    assert batcher.query_batch(search(1)) == [[Hit("1", 0.0, {})]]
    assert later_arrived.is_set()
    wait_until(lambda: len(later) == 1)
    assert later == [[[Hit("2", 0.0, {})]]]
    assert calls == [[1], [2]]
    assert batcher.query_batch(search(3)) == [[Hit("3", 0.0, {})]]  # the lead is free again


def test_the_real_engine_answers_a_combined_call_as_it_answers_each(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path, "c")
    rng = random.Random(7)
    tags = ["red", "green", "blue"]

    def vector() -> list[float]:
        return [rng.uniform(-1, 1) for _ in range(384)]

    store.upsert(
        [
            models.PointStruct(
                id=f"00000000-0000-0000-0000-{n:012d}",
                vector={
                    DENSE_VECTOR: vector(),
                    SPARSE_VECTOR: models.SparseVector(
                        indices=rng.sample(range(50), 3), values=[1.0, 0.5, 0.25]
                    ),
                },
                payload={TAGS: [tags[n % 3]]},
            )
            for n in range(300)
        ]
    )

    def hybrid(tag: str) -> list[Query]:
        only = models.Filter(
            must=[models.FieldCondition(key=TAGS, match=models.MatchValue(value=tag))]
        )
        sparse = models.SparseVector(indices=rng.sample(range(50), 2), values=[1.0, 1.0])
        return [
            Query(models.NearestQuery(nearest=vector()), 20, DENSE_VECTOR, only, payload_keys=[]),
            Query(models.NearestQuery(nearest=sparse), 20, SPARSE_VECTOR, only, payload_keys=[]),
        ]

    searches = [hybrid(tags[n % 3]) for n in range(9)]
    alone = [store.query_batch(s) for s in searches]
    assert all(branch for answer in alone for branch in answer)  # every branch found some
    calls: list[int] = []

    def counted(queries: Sequence[Query]) -> list[list[Hit]]:
        calls.append(len(queries))
        return store.query_batch(queries)

    reads = Turnstile()
    together = ask_together(SearchBatcher(reads, counted), reads, searches)
    assert calls == [18]
    assert together == alone
    store.close()


def test_an_interrupted_call_leaves_no_search_waiting() -> None:
    reads = Turnstile()

    def interrupted(queries: Sequence[Query]) -> list[list[Hit]]:
        raise KeyboardInterrupt

    batcher = SearchBatcher(reads, interrupted)
    results = ask_together(batcher, reads, [search(1), search(2), search(3)])
    assert isinstance(results[0], KeyboardInterrupt)
    assert all(isinstance(r, StoreError) and "interrupted" in r.message for r in results[1:])
    assert batcher.waiting == 0


class InterruptedOnce(Turnstile):
    """A turnstile whose first turn is interrupted before it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.interrupted = False

    @contextmanager
    def turn(self) -> Iterator[None]:
        if not self.interrupted:
            self.interrupted = True
            raise KeyboardInterrupt
        with super().turn():
            yield


def test_a_leader_interrupted_before_its_turn_leaves_the_lead_free() -> None:
    engine, reads = FakeEngine(), InterruptedOnce()
    batcher = SearchBatcher(reads, engine.query_batch)
    with pytest.raises(KeyboardInterrupt):
        batcher.query_batch(search(1))
    assert batcher.waiting == 0
    answered: list[object] = []
    later = threading.Thread(target=lambda: answered.append(batcher.query_batch(search(2))))
    later.start()
    later.join(timeout=10)
    assert answered == [[[Hit("2", 0.0, {})]]]
    assert engine.calls == [[2]]
