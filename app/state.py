"""What the running service holds: built by the lifespan, read by routes through dependencies."""

import logging
import threading
import time
from dataclasses import dataclass, field

from app.auth import Authenticator
from app.config import Settings
from app.embeddings.choose import open_dense_encoder
from app.embeddings.dense import DenseEncoder
from app.embeddings.sparse import Bm25Encoder
from app.errors import NotReady
from app.ingest.pipeline import Indexer
from app.ingest.queue import IndexQueue
from app.search.algorithms import QueryEncoder
from app.search.service import SearchService
from app.search.verify import DocRef, Verifier
from app.store.base import Store

log = logging.getLogger(__name__)


@dataclass
class Engine:
    """The parts that exist once the store and the models are loaded."""

    store: Store
    dense: DenseEncoder
    indexer: Indexer
    queue: IndexQueue
    search: SearchService
    verifier: Verifier | None


@dataclass
class AppState:
    settings: Settings
    authenticator: Authenticator
    started_at: float = field(default_factory=time.monotonic)
    engine: Engine | None = None
    error: str | None = None
    ready: threading.Event = field(default_factory=threading.Event)

    def require_engine(self) -> Engine:
        if self.engine is None:
            detail = f": {self.error}" if self.error else ", still loading"
            raise NotReady(f"the search engine is not ready{detail}")
        return self.engine


def build_engine(settings: Settings, store: Store, dense: DenseEncoder | None) -> Engine:
    model = dense if dense is not None else open_dense_encoder(settings)
    sparse = Bm25Encoder()
    indexer = Indexer(store, model, sparse)
    verifier = (
        Verifier(settings.verify_url, settings.verify_token, settings.verify_timeout)
        if settings.verify_url
        else None
    )

    def forget_missing(refs: list[DocRef]) -> None:
        for doc_type, doc_id in refs:
            indexer.delete(f"{doc_type}:{doc_id}")

    search = SearchService(
        store, QueryEncoder(model, sparse), settings.rrf_k, verifier, forget_missing
    )
    queue = IndexQueue(indexer)
    queue.start()
    return Engine(store, model, indexer, queue, search, verifier)


def load_engine(state: AppState, store: Store, dense: DenseEncoder | None) -> None:
    """Runs in a thread at start-up so /healthz answers while the model loads."""
    try:
        state.engine = build_engine(state.settings, store, dense)
        log.info("engine ready after %.1f s", time.monotonic() - state.started_at)
    except Exception as exc:
        log.exception("the engine failed to start")
        state.error = f"{type(exc).__name__}: {exc}"
    finally:
        state.ready.set()


def close_engine(state: AppState) -> None:
    engine = state.engine
    state.engine = None
    if engine is None:
        return
    engine.queue.stop()
    if engine.verifier is not None:
        engine.verifier.close()
    engine.store.close()
