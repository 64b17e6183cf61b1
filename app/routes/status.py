"""Liveness, readiness and the service status."""

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from qdrant_client import models

from app import __version__
from app.deps import EngineDep, StateDep
from app.ingest.pipeline import kind_condition
from app.search.algorithms import FIRST_CHUNK, Algorithm, FusionMethod
from app.store.fields import KIND_CHUNK, KIND_PENDING

router = APIRouter(tags=["status"])


class StatusResponse(BaseModel):
    version: str
    backend: str
    collection: str
    embedding_model: str
    embedding_dimension: int
    documents: int
    chunks: int
    pending: int
    failed: int
    supported_algorithms: list[str]
    supported_fusions: list[str]
    supported_search_types: list[str] = Field(description="Algorithms again (the app reads it).")
    rerank_available: bool


@router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "engine or models not ready"}})
def readyz(state: StateDep) -> JSONResponse:
    if state.engine is None:
        status = "failed" if state.error else "loading"
        body = {"status": status} | ({"error": state.error} if state.error else {})
        return JSONResponse(body, status_code=503)
    return JSONResponse({"status": "ready"})


def _count(engine: EngineDep, *conditions: models.Condition) -> int:
    return engine.store.count(models.Filter(must=list(conditions)))


def _status_is(value: str) -> models.FieldCondition:
    return models.FieldCondition(key="status", match=models.MatchValue(value=value))


@router.get("/api/v1/status", response_model=StatusResponse)
def status(state: StateDep, engine: EngineDep) -> StatusResponse:
    chunk = kind_condition(KIND_CHUNK)
    pending = kind_condition(KIND_PENDING)
    return StatusResponse(
        version=__version__,
        backend=engine.store.backend,
        collection=state.settings.collection,
        embedding_model=engine.dense.name,
        embedding_dimension=engine.dense.dimension,
        documents=_count(engine, chunk, FIRST_CHUNK),
        chunks=_count(engine, chunk),
        pending=_count(engine, pending, _status_is("pending")),
        failed=_count(engine, pending, _status_is("failed")),
        supported_algorithms=[a.value for a in Algorithm],
        supported_fusions=[f.value for f in FusionMethod],
        supported_search_types=[a.value for a in Algorithm],
        rerank_available=False,
    )
