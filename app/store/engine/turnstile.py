"""Reads of the engine process take turns in the order they came.

Each connection has a thread, and Qdrant Edge holds the GIL through every call, so reads queue
for the GIL; the GIL goes to whichever waiting thread the OS wakes first, not to the one that
waited longest. Under 16 clients at 100k chunks a `query_batch` that costs ~5 ms waited 300-360
ms at times in the engine, and searches over HTTP took 1.0-1.3 s now and then."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Turnstile:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._issued = 0  # tickets handed out
        self._serving = 0  # the ticket whose turn it is

    @contextmanager
    def turn(self) -> Iterator[None]:
        with self._changed:
            ticket = self._issued
            self._issued += 1
            self._changed.wait_for(lambda: self._serving == ticket)
        try:
            yield
        finally:
            with self._changed:
                self._serving += 1
                self._changed.notify_all()
