"""What the running service holds: built by the lifespan, read by routes through dependencies."""

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.auth import Authenticator
from app.config import Settings
from app.embeddings.choose import for_queries, open_dense_encoder
from app.embeddings.dense import DenseEncoder
from app.embeddings.query_cache import QueryVectorCache
from app.embeddings.sparse import Bm25Encoder
from app.errors import NotReady
from app.ingest.leases import LeaseKeeper
from app.ingest.pipeline import Indexer
from app.ingest.queue import IndexQueue
from app.ingest.service import IngestService, extractor_for
from app.search.algorithms import QueryEncoder
from app.search.api import SearchApi
from app.search.links import LinkTemplates
from app.search.navigation import Navigator
from app.search.rerank import Reranker
from app.search.service import SearchService
from app.search.telemetry import SearchTelemetry
from app.search.verify import DocRef, Verifier, VerifySource
from app.store.base import Store
from app.store.fields import doc_key
from app.telemetry.metrics import Metrics

if TYPE_CHECKING:
    from app.nextcloud.connector import Connector

log = logging.getLogger(__name__)


@dataclass
class Services:
    """The parts that exist once the store and the models are loaded (the engine itself,
    Qdrant, is behind `store`)."""

    store: Store
    dense: DenseEncoder
    ingest: IngestService
    search: SearchApi
    verifier: VerifySource | None
    keeper: LeaseKeeper
    navigation: Navigator
    reranker: Reranker | None = None
    connector: "Connector | None" = None


@dataclass
class AppState:
    settings: Settings
    authenticator: Authenticator
    started_at: float = field(default_factory=time.monotonic)
    metrics: Metrics = field(default_factory=Metrics)
    services: Services | None = None
    error: str | None = None
    ready: threading.Event = field(default_factory=threading.Event)

    def begin_shutdown(self) -> None:
        """On SIGTERM, before in-flight requests are waited for: the indexer stops between
        documents, so `?wait=true` requests answer at once instead of holding the exit."""
        if self.services is not None:
            self.services.ingest.queue.stop_soon()

    def require_services(self) -> Services:
        if self.services is None:
            detail = f": {self.error}" if self.error else ", still loading"
            raise NotReady(f"the search engine is not ready{detail}")
        return self.services


def build_services(
    settings: Settings, store: Store, dense: DenseEncoder | None, metrics: Metrics
) -> Services:
    model = dense if dense is not None else open_dense_encoder(settings)
    sparse = Bm25Encoder()
    indexer = Indexer(store, model, sparse)
    queue = IndexQueue(indexer, settings.max_pending)
    queue.start()

    def take_over_orphans() -> None:  # placeholders of replicas that died
        for job in indexer.pending_jobs(include_own=False):
            queue.submit(job)

    keeper = LeaseKeeper(indexer.leases, take_over_orphans)
    keeper.start()
    ingest = IngestService(indexer, queue, extractor_for(settings))
    connector = None
    if settings.nextcloud_url:  # its modules, its HTTP client among them, only then (~0.2 s)
        from app.nextcloud.connector import open_connector

        connector = open_connector(settings.nextcloud_url, settings, ingest)
    verifier: VerifySource | None = None
    if settings.verify_url:
        verifier = Verifier(settings.verify_url, settings.verify_token, settings.verify_timeout)
    elif connector is not None:  # Nextcloud itself answers
        verifier = connector.verifier(settings.verify_timeout)

    def forget_missing(refs: list[DocRef]) -> None:
        for doc_type, doc_id in refs:
            indexer.delete(doc_key(doc_type, doc_id))

    reranker = (
        Reranker(
            settings.rerank_url,
            settings.rerank_model,
            settings.rerank_api_key,
            settings.verify_timeout,
            settings.rerank_top_n,
        )
        if settings.rerank_url
        else None
    )
    telemetry = SearchTelemetry(metrics, settings.slow_search_seconds)
    search = SearchService(
        store,
        QueryEncoder(QueryVectorCache(for_queries(model)), sparse),
        settings.rrf_k,
        verifier,
        forget_missing,
        telemetry.observe,
        reranker,
        settings.verify_timeout,
    )
    links = LinkTemplates(settings.link_templates)
    return Services(
        store,
        model,
        ingest,
        SearchApi(search, store, links),
        verifier,
        keeper,
        Navigator(store),
        reranker,
        connector,
    )


def load_services(state: AppState, store: Store, dense: DenseEncoder | None) -> None:
    """Runs in a thread at start-up so /healthz answers while the model loads."""
    try:
        services = build_services(state.settings, store, dense, state.metrics)
        try:
            services.search.service.warm_up()
        except Exception:  # the searches that follow meet the fault with their own errors
            log.warning("the warm-up search failed", exc_info=True)
        state.services = services
        log.info("engine ready after %.1f s", time.monotonic() - state.started_at)
    except Exception as exc:
        log.exception("the engine failed to start")
        state.error = f"{type(exc).__name__}: {exc}"
    finally:
        state.ready.set()


def close_services(state: AppState) -> None:
    services = state.services
    state.services = None
    if services is None:
        return
    if services.connector is not None:
        services.connector.stop()
    services.keeper.stop()
    services.ingest.queue.stop()
    services.ingest.close()
    if services.verifier is not None:
        services.verifier.close()
    if services.reranker is not None:
        services.reranker.close()
    services.store.close()
