"""The service's own state: its figures, read once per request or scrape (`StatusFigures`) and
rendered by `GET /api/v1/status`, the sync status, MCP's `index_status` and `/metrics`
(`app.routes.metrics`); readiness; and who a token is."""

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from app import __version__
from app.auth import Principal
from app.config import Settings
from app.ingest.documents import IndexCounts
from app.ingest.sparse_fit import read_fit
from app.search.algorithms import Algorithm, FusionMethod
from app.state import AppState, Services
from app.store.base import VectorIndex


@dataclass(frozen=True)
class StatusFigures:
    backend: str  # embedded | server
    embedding_model: str
    embedding_dimension: int
    counts: IndexCounts
    points: int  # every point in the engine: chunks, placeholders, the statistics' own
    queue_depth: int
    max_pending: int
    indexing_rate: float  # documents a second over the last minute
    syncing: bool  # documents waiting to be indexed, or a purge
    index: VectorIndex | None  # None: a Qdrant server, which indexes by itself
    bm25_avg_len: float | None  # None before the first document
    rerank_available: bool

    @classmethod
    def of(cls, services: Services) -> "StatusFigures":
        ingest = services.ingest
        fit = read_fit(services.store)
        return cls(
            backend=services.store.backend,
            embedding_model=services.dense.name,
            embedding_dimension=services.dense.dimension,
            counts=ingest.counts(),
            points=services.store.count(),
            queue_depth=ingest.queue.depth,
            max_pending=ingest.queue.max_pending,
            indexing_rate=ingest.queue.rate(),
            syncing=ingest.syncing,
            index=services.store.vector_index(),
            bm25_avg_len=None if fit is None else round(fit.avg_len, 2),
            rerank_available=services.reranker is not None,
        )


class Health(BaseModel):
    status: Literal["ok"] = "ok"


class Readiness(BaseModel):
    status: Literal["ready", "loading", "failed"]
    error: str | None = Field(default=None, description="Why the start failed.")

    @classmethod
    def of(cls, state: AppState) -> "Readiness":
        if state.services is not None:
            return cls(status="ready")
        if state.error:
            return cls(status="failed", error=state.error)
        return cls(status="loading")


class StatusResponse(BaseModel):
    version: str
    backend: str = Field(description="embedded | server")
    collection: str
    embedding_model: str
    embedding_dimension: int
    documents: int = Field(description="Indexed documents.")
    chunks: int = Field(description="Searchable chunks.")
    pending: int = Field(description="Accepted documents waiting to be indexed.")
    failed: int = Field(description="Accepted documents whose indexing failed.")
    queue_depth: int = Field(description="Accepted documents waiting in the indexer's queue.")
    max_pending: int = Field(description="Past this queue depth, ingest answers 429.")
    indexing_rate: float = Field(description="Documents indexed per second over the last minute.")
    hnsw_chunks: int | None = Field(
        description="Embedded engine: chunks whose dense vectors are in an HNSW index (estimated"
        " from the engine's counters). Null on a Qdrant server, which indexes by itself."
    )
    unindexed_chunks: int | None = Field(
        description="Embedded engine: chunks outside the HNSW index, which searches scan exactly"
        " until the service rebuilds it (past SEARCH_HNSW_THRESHOLD of them; an underestimate"
        " after deletes or re-sends). Null on a Qdrant server."
    )
    hnsw_rebuilds: int | None = Field(
        description="Embedded engine under `serve`: HNSW rebuilds completed (handed over) since"
        " the start. Null on a Qdrant server or when the engine runs in the process."
    )
    hnsw_rebuilding: bool = Field(description="An HNSW rebuild is running now.")
    supported_algorithms: list[str]
    supported_fusions: list[str]
    supported_search_types: list[str] = Field(description="Algorithms again (the app reads it).")
    rerank_available: bool = Field(
        description="A reranker is configured (SEARCH_RERANK_URL): `rerank: true` reorders the"
        " first candidates."
    )
    bm25_avg_len: float | None = Field(
        description="The mean chunk length, in BM25 tokens, that the sparse vectors are encoded"
        " with (`astrolabe-search reindex-sparse` re-fits it); null before the first document."
    )

    @classmethod
    def of(cls, settings: Settings, figures: StatusFigures) -> "StatusResponse":
        counts, index = figures.counts, figures.index
        algorithms = [a.value for a in Algorithm]
        return cls(
            version=__version__,
            backend=figures.backend,
            collection=settings.collection,
            embedding_model=figures.embedding_model,
            embedding_dimension=figures.embedding_dimension,
            documents=counts.documents,
            chunks=counts.chunks,
            pending=counts.pending,
            failed=counts.failed,
            queue_depth=figures.queue_depth,
            max_pending=figures.max_pending,
            indexing_rate=figures.indexing_rate,
            hnsw_chunks=None if index is None else index.hnsw,
            unindexed_chunks=None if index is None else index.plain,
            hnsw_rebuilds=None if index is None else index.rebuilds,
            hnsw_rebuilding=index is not None and index.rebuilding,
            supported_algorithms=algorithms,
            supported_fusions=[f.value for f in FusionMethod],
            bm25_avg_len=figures.bm25_avg_len,
            supported_search_types=algorithms,
            rerank_available=figures.rerank_available,
        )


class Me(BaseModel):
    """Who the token is: its user, groups and scopes."""

    sub: str = Field(examples=["alice"])
    groups: list[str] = Field(examples=[["eng"]])
    scopes: list[str] = Field(examples=[["index", "search"]])

    @classmethod
    def of(cls, principal: Principal) -> "Me":
        return cls(
            sub=principal.user, groups=list(principal.groups), scopes=sorted(principal.scopes)
        )
