"""Extraction runs in worker processes, never in the service's own: a reader holds the GIL for
as long as it parses (most readers are pure Python; OCR takes seconds a page), so in-process it
would stall every search. Here a
worker runs at a lower CPU priority with a memory cap, a file that takes longer than the time
limit is cut off by killing its worker, and a reader that crashes takes only its worker down."""

import logging
import os
import queue
import resource
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from app.errors import ServiceError
from app.extract.archive import ArchiveLimits
from app.extract.errors import Unreadable, refusal
from app.extract.model import Extracted

log = logging.getLogger(__name__)

WORKER_NICENESS = 10  # searches and embedding in the service come first
WORKER_MEMORY_BYTES = 4 * 2**30  # address space of one worker: a reader past it fails alone
START_SECONDS = 120  # a worker's imports, on a machine busy with other work


@dataclass(frozen=True)
class Request:
    path: str
    name: str
    mime_type: str | None


def serve(connection: Connection, limits: ArchiveLimits) -> None:
    """The worker's loop: one file at a time, answered with ("ok", Extracted) or
    ("refused", code, message)."""
    # The readers (openpyxl, pypdfium2, ...: 0.3 s of imports) are the worker's alone: the service
    # that starts workers never reads a file itself, and starts faster without them.
    from app.extract.reader import read_file

    os.nice(WORKER_NICENESS)
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    connection.send(("ready",))  # its imports are done: the time limit counts from here
    while True:
        try:
            request: Request = connection.recv()
        except (EOFError, OSError):  # the service is gone
            return
        try:
            extracted = read_file(Path(request.path), limits, request.name, request.mime_type)
            connection.send(("ok", extracted))
        except ServiceError as exc:
            connection.send(("refused", exc.code, exc.message))
        except MemoryError:
            connection.send(("refused", Unreadable.code, "the file needs too much memory to read"))
        except Exception as exc:  # a reader's own bug on this file: the file is not readable
            connection.send(("refused", Unreadable.code, f"{type(exc).__name__}: {exc}"))


class _Worker:
    """A fresh interpreter (`python -m app.extract.worker`), not a fork of this process (which
    runs threads) nor multiprocessing's spawn (which re-imports the main module)."""

    def __init__(self, limits: ArchiveLimits) -> None:
        ours, theirs = socket.socketpair()
        command = [sys.executable, "-m", "app.extract.worker", str(theirs.fileno())]
        command += [str(limits.max_bytes), str(limits.max_entries)]
        self.process = subprocess.Popen(
            command, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL
        )
        theirs.close()
        self.connection = Connection(ours.detach())
        try:
            if not self.connection.poll(START_SECONDS) or self.connection.recv() != ("ready",):
                raise OSError("the extraction worker did not start")
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        self.connection.close()
        self.process.kill()
        self.process.wait()


class Extractor:
    """Up to `workers` files extracted at once, each within `timeout` seconds; callers beyond
    that wait their turn (call from a thread: `extract` blocks)."""

    def __init__(self, workers: int, timeout: float, limits: ArchiveLimits) -> None:
        self.workers = workers
        self.timeout = timeout
        self.limits = limits
        self._idle: queue.Queue[_Worker | None] = queue.Queue()
        for _ in range(workers):
            self._idle.put(None)  # started on first use
        self._closed = threading.Event()
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()

    def extract(self, path: Path, name: str = "", mime_type: str | None = None) -> Extracted:
        """The file's text; FileRefused / TooLarge when it cannot be read, or not in time."""
        worker = self._idle.get()
        try:
            worker = worker or self._start()
            answer = self._ask(worker, Request(str(path), name, mime_type))
        except BaseException:
            if worker is not None:
                self._retire(worker)
            self._idle.put(None)
            raise
        self._idle.put(worker)
        if answer[0] == "ok":
            extracted: Extracted = answer[1]
            return extracted
        raise refusal(answer[1], answer[2])

    def _ask(self, worker: _Worker, request: Request) -> tuple[Any, ...]:
        started = time.monotonic()
        try:
            worker.connection.send(request)
            if worker.connection.poll(self.timeout):
                answer: tuple[Any, ...] = worker.connection.recv()
                return answer
        except (EOFError, OSError) as exc:
            raise Unreadable(
                f"the reader stopped on this file ({type(exc).__name__}): it is damaged or hostile"
            ) from exc
        if self._closed.is_set():
            raise Unreadable("the service is shutting down")
        log.warning("extraction cut off after %.0f s", time.monotonic() - started)
        raise Unreadable(
            f"the file could not be read within the time limit of {self.timeout:g} s"
            " (SEARCH_EXTRACT_TIMEOUT)"
        )

    def _start(self) -> _Worker:
        worker = _Worker(self.limits)
        with self._lock:
            self._all.add(worker)
        return worker

    def _retire(self, worker: _Worker) -> None:
        with self._lock:
            self._all.discard(worker)
        worker.stop()

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            workers, self._all = list(self._all), set()
        for worker in workers:
            worker.stop()
