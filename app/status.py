"""The service's own state on the wire: readiness, the status summary, and who a token is."""

from typing import Literal

from pydantic import BaseModel, Field

from app import __version__
from app.auth import Principal
from app.config import Settings
from app.ingest.sparse_fit import read_fit
from app.search.algorithms import Algorithm, FusionMethod
from app.state import AppState, Services


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
    def of(cls, settings: Settings, services: Services) -> "StatusResponse":
        counts = services.ingest.counts()
        index = services.store.vector_index()
        fit = read_fit(services.store)
        algorithms = [a.value for a in Algorithm]
        return cls(
            version=__version__,
            backend=services.store.backend,
            collection=settings.collection,
            embedding_model=services.dense.name,
            embedding_dimension=services.dense.dimension,
            documents=counts.documents,
            chunks=counts.chunks,
            pending=counts.pending,
            failed=counts.failed,
            queue_depth=services.ingest.queue.depth,
            max_pending=services.ingest.queue.max_pending,
            indexing_rate=services.ingest.queue.rate(),
            hnsw_chunks=None if index is None else index.hnsw,
            unindexed_chunks=None if index is None else index.plain,
            hnsw_rebuilds=None if index is None else index.rebuilds,
            hnsw_rebuilding=index is not None and index.rebuilding,
            supported_algorithms=algorithms,
            supported_fusions=[f.value for f in FusionMethod],
            bm25_avg_len=None if fit is None else round(fit.avg_len, 2),
            supported_search_types=algorithms,
            rerank_available=services.reranker is not None,
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
