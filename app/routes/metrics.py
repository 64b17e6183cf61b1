"""`GET /metrics` (scope `index`): the Prometheus text format. `SEARCH_METRICS_PORT` also serves
it without a token on a port of its own (app.telemetry.metrics.metrics_port).

The HTTP process measures what passes through it (app.telemetry.metrics); the figures the
engine and the indexer own are rendered at scrape time from `StatusFigures`, the same read as
`GET /api/v1/status`, never by reaching into an engine: they stay right wherever it runs."""

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Response
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app import __version__
from app.errors import ErrorBody, ServiceError
from app.routes.deps import IndexPrincipal, StateDep
from app.state import AppState
from app.status import StatusFigures
from app.telemetry.metrics import CONTENT_TYPE

if TYPE_CHECKING:
    from app.nextcloud.connector import Connector

router = APIRouter(tags=["operations"])
RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Prometheus text format (version 0.0.4); docs/deployment.md lists the"
        " metrics.",
        "content": {"text/plain": {"schema": {"type": "string"}}},
    },
    **{code: {"model": ErrorBody} for code in (401, 403)},
}


@router.get("/metrics", response_class=Response, responses=RESPONSES)
def metrics(_: IndexPrincipal, state: StateDep) -> Response:
    """Request, search, verify, ingest and index metrics of this process, for Prometheus."""
    return Response(state.metrics.render(), media_type=CONTENT_TYPE)


class StatusCollector(Collector):
    def __init__(self, state: AppState) -> None:
        self._state = state

    def collect(self) -> Iterator[Metric]:
        services = self._state.services
        ready = float(services is not None)
        yield _gauge("astrolabe_ready", "1 once the engine and the models are loaded.", ready)
        if services is None:
            return
        try:
            figures = list(_families(StatusFigures.of(services)))
        except ServiceError:  # the engine did not answer
            yield _gauge("astrolabe_engine_up", "1 when the engine answered this scrape.", 0)
            return
        yield _gauge("astrolabe_engine_up", "1 when the engine answered this scrape.", 1)
        yield from figures
        if services.connector is not None:
            yield from _connector_families(services.connector)

    def describe(self) -> Iterator[Metric]:
        return iter(())  # the families depend on the state: registered without a dry run


def _families(figures: StatusFigures) -> Iterator[Metric]:
    counts = figures.counts
    info = GaugeMetricFamily(
        "astrolabe_build_info",
        "The version, the engine backend (embedded, server) and the embedding model.",
        labels=("version", "backend", "embedding_model"),
    )
    info.add_metric((__version__, figures.backend, figures.embedding_model), 1)
    yield info
    yield _gauge(
        "astrolabe_index_points", "Points in the engine (chunks, placeholders).", figures.points
    )
    yield _gauge("astrolabe_index_documents", "Indexed documents.", counts.documents)
    yield _gauge("astrolabe_index_chunks", "Searchable chunks.", counts.chunks)
    yield _gauge(
        "astrolabe_ingest_pending_documents",
        "Accepted documents waiting to be indexed.",
        counts.pending,
    )
    yield _gauge(
        "astrolabe_ingest_failed_documents",
        "Accepted documents whose indexing failed.",
        counts.failed,
    )
    yield _gauge(
        "astrolabe_ingest_queue_depth",
        "Documents waiting in the indexer's queue.",
        figures.queue_depth,
    )
    yield _gauge(
        "astrolabe_ingest_queue_limit",
        "Past this queue depth ingest answers 429 (SEARCH_MAX_PENDING).",
        figures.max_pending,
    )
    yield _gauge(
        "astrolabe_ingest_rate_documents_per_second",
        "Documents indexed per second over the last minute.",
        figures.indexing_rate,
    )
    index = figures.index
    if index is not None:  # a Qdrant server builds its indexes by itself
        yield _gauge(
            "astrolabe_index_hnsw_chunks",
            "Embedded engine: chunks in the HNSW index (estimated).",
            index.hnsw,
        )
        yield _gauge(
            "astrolabe_index_unindexed_chunks",
            "Embedded engine: chunks outside the HNSW index, scanned exactly by every"
            " search until the service's next rebuild of it.",
            index.plain,
        )
        if index.rebuilds is not None:  # the engine runs in processes of its own (`serve`)
            yield from _rebuild_figures(figures)


def _connector_families(connector: "Connector") -> Iterator[Metric]:
    yield CounterMetricFamily(
        "astrolabe_nextcloud_ticks", "Nextcloud connector: ticks run.", value=connector.ticks()
    )
    requests = CounterMetricFamily(
        "astrolabe_nextcloud_requests",
        "Nextcloud connector: requests sent to Nextcloud, by HTTP status (0: no answer).",
        labels=("status",),
    )
    for status, count in sorted(connector.counter.by_status.items()):
        requests.add_metric((str(status),), count)
    yield requests
    lag = GaugeMetricFamily(
        "astrolabe_nextcloud_lag_seconds",
        "Nextcloud connector: age of the oldest change not yet searchable, per user.",
        labels=("user",),
    )
    states = GaugeMetricFamily(
        "astrolabe_nextcloud_users", "Nextcloud connector: users by state.", labels=("state",)
    )
    skipped = GaugeMetricFamily(
        "astrolabe_nextcloud_skipped_files",
        "Nextcloud connector: files not indexed (dead letters), per user and reason; tried"
        " again only once their ETag changes.",
        labels=("user", "reason"),
    )
    by_state = dict.fromkeys(("syncing", "ok", "failing", "revoked"), 0)
    for user in connector.figures():
        lag.add_metric((user.user_id,), user.lag_seconds)
        by_state[user.state] = by_state.get(user.state, 0) + 1
        for reason, count in sorted(user.skipped.items()):
            skipped.add_metric((user.user_id, reason), count)
    for state, count in by_state.items():
        states.add_metric((state,), count)
    yield from (lag, states, skipped)


def _rebuild_figures(figures: StatusFigures) -> Iterator[Metric]:
    index = figures.index
    if index is None:
        return
    yield CounterMetricFamily(
        "astrolabe_index_hnsw_rebuilds",
        "Embedded engine: HNSW rebuilds and merges handed over since the start.",
        value=index.rebuilds,
    )
    yield _gauge(
        "astrolabe_index_hnsw_rebuilding",
        "Embedded engine: 1 while a rebuild or a merge runs.",
        float(index.rebuilding),
    )
    memory = GaugeMetricFamily(
        "astrolabe_engine_resident_memory_bytes",
        "Embedded engine: resident memory of its processes (serving; rebuild while one runs),"
        " which process_resident_memory_bytes (the HTTP process) leaves out.",
        labels=("role",),
    )
    for role, size in sorted(index.engine_memory.items()):
        memory.add_metric((role,), size)
    yield memory


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)
