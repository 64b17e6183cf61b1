"""bench.harness.loopback's names that tests outside tests/bench import by this path
(tests/embeddings, tests/search, tests/store, tests/telemetry): to go once they import the
harness."""

from bench.harness.loopback import JsonHandler, loopback_server

__all__ = ["JsonHandler", "loopback_server"]
