"""bench.harness.demo_server's names that tests outside tests/bench and tests/browser's page
tests import by this path (tests/helpers.py, tests/store, tests/mcp, tests/telemetry,
tests/embeddings, tests/browser/test_search_page.py): to go once they import the harness."""

from bench.harness.demo_server import DemoServer
from bench.harness.loopback import free_port

__all__ = ["DemoServer", "free_port"]
