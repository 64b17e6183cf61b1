"""A stand-in HTTP service on a loopback port (an embedding API, a verify endpoint, a failing
Qdrant), for the tests and the benchmarks; and a free loopback port for a real one."""

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


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
