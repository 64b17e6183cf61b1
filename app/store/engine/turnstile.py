"""Reads of the engine process take turns in the order they came.

Each connection has a thread, and Qdrant Edge holds the GIL through every call, so reads queue
for the GIL; the GIL goes to whichever waiting thread the OS wakes first, not to the one that
waited longest. Under 16 clients at 100k chunks a `query_batch` that costs ~5 ms waited 300-360
ms at times in the engine, and searches over HTTP took 1.0-1.3 s now and then.

A read that ends hands the turn to the next one directly, waking that thread only: waking every
waiting thread to find the next (a condition's `notify_all`) took ~7 % of the engine's GIL under
16 clients, and the hand-off gave 1.1-1.45x the searches/s in six alternated runs (users' corpus,
100k; docs/benchmarks.md)."""

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager


class Turnstile:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[threading.Lock] = deque()  # one held lock per waiting read
        self._taken = False

    @property
    def waiting(self) -> int:
        return len(self._queue)

    @contextmanager
    def turn(self) -> Iterator[None]:
        with self._lock:
            gate = None
            if self._taken:
                gate = threading.Lock()
                gate.acquire()
                self._queue.append(gate)
            self._taken = True
        if gate is not None:
            gate.acquire()  # released by the read before: the turn is ours
        try:
            yield
        finally:
            with self._lock:
                if self._queue:
                    self._queue.popleft().release()
                else:
                    self._taken = False
