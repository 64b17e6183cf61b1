"""A stand-in HTTP service on a loopback port (an embedding API, a verify endpoint, a failing
Qdrant), for the tests and the benchmarks; and a free loopback port for a real one."""

import itertools
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Ports handed out from a range of this process's own, below Linux's ephemeral ports (32768 and
# up). A port the kernel picked (bind to 0) was free only at that moment: another test worker
# could pick it too and bind it first, and the first test then spoke to the other's service
# (seen: its /readyz answered, then "address already in use" in its own log).
_RANGE = 1000


def _port_range() -> Iterator[int]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    start = 20000 + _RANGE * (int(worker) % 12 if worker.isdigit() else 0)
    offset = os.getpid() % _RANGE  # two runs on one machine start apart
    return itertools.cycle([start + (offset + i) % _RANGE for i in range(_RANGE)])


_ports = _port_range()
_ports_lock = threading.Lock()


def free_port() -> int:
    """A loopback port nobody listens on now: the next one of this process's range that binds
    (each is handed out once per cycle of the range)."""
    with _ports_lock:
        for _ in range(_RANGE):
            port = next(_ports)
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    raise OSError(f"no free loopback port in this process's range of {_RANGE}")


class JsonHandler(BaseHTTPRequestHandler):
    """A request handler that answers JSON and logs nothing."""

    def send_json_headers(self, status: int, length: int) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def send_json(self, status: int, raw: bytes) -> None:
        self.send_json_headers(status, len(raw))
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def loopback_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """The handler served from a thread on a free loopback port; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
