"""The ONNX encoder's bounded pools: queries (on the int8 graph) and bulk batches (on the float
graph) each run on their own threads, never more at once than the pool allows, whatever the
number of callers."""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from app.embeddings.dense import MiniLMEncoder

LONG = " ".join(["the magnetic field of the electron beam was measured twice"] * 20)


class Recorder:
    """The runs of the real ONNX sessions it wraps: the thread of each and how many overlapped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self.peak = 0
        self.threads: set[str] = set()
        self.starts: list[str] = []  # the thread of each run, in the order they started
        self.started = threading.Event()

    def wrap(self, session: Any) -> "RecordingSession":
        return RecordingSession(session, self)

    def enter(self) -> None:
        with self._lock:
            self._active += 1
            self.peak = max(self.peak, self._active)
            self.threads.add(threading.current_thread().name)
            self.starts.append(threading.current_thread().name)
        self.started.set()

    def leave(self) -> None:
        with self._lock:
            self._active -= 1


class RecordingSession:
    def __init__(self, session: Any, recorder: Recorder) -> None:
        self._session = session
        self._recorder = recorder

    def run(self, outputs: Any, feeds: Any) -> Any:
        self._recorder.enter()
        try:
            return self._session.run(outputs, feeds)
        finally:
            self._recorder.leave()


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> tuple[MiniLMEncoder, Recorder]:
    """Both graphs' runs in one record (a query behind bulk work is a matter of their order)."""
    encoder = MiniLMEncoder(workers=2)
    assert encoder.queries.graph is not encoder.graph
    recorder = Recorder()
    for graph in (encoder.graph, encoder.queries.graph):
        monkeypatch.setattr(graph, "session", recorder.wrap(graph.session))
    return encoder, recorder


def _from_threads(callers: int, call: Callable[[], object]) -> None:
    with ThreadPoolExecutor(callers) as callers_pool:
        for future in [callers_pool.submit(call) for _ in range(callers)]:
            future.result()


def test_concurrent_queries_run_one_at_a_time_on_the_query_pool(
    recorded: tuple[MiniLMEncoder, Recorder],
) -> None:
    encoder, recorder = recorded
    _from_threads(8, lambda: [encoder.queries.encode([LONG]) for _ in range(3)])
    assert recorder.peak == 1
    assert recorder.threads and all(
        name.startswith("astrolabe-embed-query") for name in recorder.threads
    )


def test_bulk_batches_run_on_their_own_bounded_pool(
    recorded: tuple[MiniLMEncoder, Recorder],
) -> None:
    encoder, recorder = recorded
    vectors = encoder.encode([f"{LONG} {i}" for i in range(40)])
    assert len(vectors) == 40
    assert 1 <= recorder.peak <= 2
    assert recorder.threads and all(
        name.startswith("astrolabe-embed-bulk") for name in recorder.threads
    )


def test_a_query_is_not_queued_behind_bulk_work(
    recorded: tuple[MiniLMEncoder, Recorder],
) -> None:
    encoder, recorder = recorded
    texts = [f"{LONG} {i}" for i in range(64)]  # 8 batches of 8
    with ThreadPoolExecutor(1) as background:
        bulk = background.submit(encoder.encode, texts)
        assert recorder.started.wait(timeout=60)
        encoder.queries.encode([LONG])
        bulk.result()
    query_at = next(i for i, name in enumerate(recorder.starts) if "query" in name)
    assert query_at < 8, "the query started only after every bulk batch had"
    assert recorder.peak <= 3
