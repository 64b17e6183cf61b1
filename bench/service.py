"""bench.harness.service's name that tests/telemetry/test_metrics.py imports by this path: to go
once it imports the harness."""

from bench.harness.service import process_memory

__all__ = ["process_memory"]
