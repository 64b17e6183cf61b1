"""The Prometheus metrics of one app, in a registry of its own (several apps may live in one
process: tests). The HTTP process measures what passes through it (requests, searches and their
stages, verify outcomes); the figures the engine owns (index size, queue, failures) are read
at scrape time through the status calls (`app.telemetry.status`), so they stay right wherever
the engine runs. No label carries a user id, a query or a document id: every label value comes
from a short fixed set (route templates, algorithms, stages, outcomes, status codes)."""

from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    start_http_server,
)
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4  # the text format every Prometheus reads
# Seconds; searches sit in 2-100 ms, waits for indexing (`?wait=true`) run to minutes.
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
SEARCH_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class Metrics:
    def __init__(self) -> None:
        # A `_created` series beside every counter and histogram: noise to Prometheus.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry()
        for collector in (ProcessCollector, PlatformCollector, GCCollector):
            collector(registry=self.registry)
        http = ("method", "route", "status")
        self.http_requests = Counter(
            "astrolabe_http_requests",
            "HTTP requests answered, by method, route template and status code.",
            http,
            registry=self.registry,
        )
        self.http_seconds = Histogram(
            "astrolabe_http_request_duration_seconds",
            "Time to answer an HTTP request, by method, route template and status code.",
            http,
            buckets=HTTP_BUCKETS,
            registry=self.registry,
        )
        self.http_in_progress = Gauge(
            "astrolabe_http_requests_in_progress",
            "HTTP requests being answered now.",
            registry=self.registry,
        )
        self.search_seconds = Histogram(
            "astrolabe_search_duration_seconds",
            "Search time by algorithm (hybrid, semantic, bm25, browse), granularity (chunk,"
            " document) and stage: embed, engine (candidates, counts), facets, verify, total.",
            ("algorithm", "granularity", "stage"),
            buckets=SEARCH_BUCKETS,
            registry=self.registry,
        )
        self.verifications = Counter(
            "astrolabe_search_verifications",
            "Searches by verify-on-read outcome: ok, skipped (no verify URL), degraded (the"
            " source failed or was slow; results kept).",
            ("outcome",),
            registry=self.registry,
        )
        self.verify_dropped = Counter(
            "astrolabe_search_verify_dropped_documents",
            "Documents verify-on-read dropped from results (forbidden or missing at the source).",
            registry=self.registry,
        )
        self.slow_searches = Counter(
            "astrolabe_search_slow",
            "Searches slower than SEARCH_SLOW_SEARCH_SECONDS (each also logged).",
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)


@contextmanager
def metrics_port(host: str, port: int, metrics: Metrics) -> Iterator[None]:
    """`/metrics` without a token on a port of its own (SEARCH_METRICS_PORT), while the app
    runs."""
    server, thread = start_http_server(port, host, metrics.registry)
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
