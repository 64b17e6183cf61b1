"""Writing documents (scope `index`): accept a batch, read one's status, delete one."""

import asyncio
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from qdrant_client import models

from app.deps import EngineDep, IndexerDep
from app.errors import ErrorBody, NotFound
from app.filters.spec import format_timestamp
from app.ingest.documents import DOC_TYPE_PATTERN, DocumentBatch, validate_batch
from app.ingest.pipeline import chunk_point_id, doc_key_condition, kind_condition, placeholder_id
from app.state import Engine
from app.store.fields import KIND_CHUNK

router = APIRouter(prefix="/api/v1/documents", tags=["documents"])
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 413, 503)
}

DocType = Annotated[str, Path(pattern=DOC_TYPE_PATTERN)]
DocId = Annotated[str, Path(min_length=1, max_length=256)]


class Accepted(BaseModel):
    accepted: int


class Indexed(BaseModel):
    indexed: int
    chunks: int


class DocumentStatus(BaseModel):
    doc_type: str
    doc_id: str
    status: Literal["pending", "indexed", "failed"]
    chunks: int
    modified_at: str
    title: str
    owner: str
    file_path: str | None
    tags: list[str]
    category: str | None
    mime_type: str | None
    error: str | None = None


@router.post(
    "",
    status_code=202,
    response_model=Accepted,
    responses={200: {"model": Indexed, "description": "with ?wait=true"}, **ERRORS},
)
async def post_documents(
    body: DocumentBatch,
    engine: EngineDep,
    _: IndexerDep,
    wait: Annotated[bool, Query(description="Answer once the documents are searchable.")] = False,
) -> Any:
    """Each document is at once a placeholder (never returned by search) until indexed; the
    placeholder is the persisted promise, so a restart resumes the work."""
    documents = validate_batch(body.documents)
    jobs = await asyncio.to_thread(engine.indexer.accept, documents)
    futures = [engine.queue.submit(job) for job in jobs]
    if not wait:
        return Accepted(accepted=len(documents))
    chunks = await asyncio.gather(*(asyncio.wrap_future(f) for f in futures))
    return JSONResponse(
        Indexed(indexed=len(jobs), chunks=sum(chunks)).model_dump(), status_code=200
    )


def _status(engine: Engine, doc_type: str, doc_id: str) -> DocumentStatus:
    key = f"{doc_type}:{doc_id}"
    found = engine.store.retrieve([placeholder_id(key), chunk_point_id(key, 0)])
    if not found:
        raise NotFound(f"no document {key}")
    chunks = engine.store.count(
        models.Filter(must=[doc_key_condition(key), kind_condition(KIND_CHUNK)])
    )
    placeholder = next((h for h in found if h.id == placeholder_id(key)), None)
    if placeholder is not None:
        doc = dict(placeholder.payload["document"])
        status = placeholder.payload.get("status", "pending")
        error = placeholder.payload.get("error")
    else:
        doc, status, error = found[0].payload, "indexed", None
    return DocumentStatus(
        doc_type=doc_type,
        doc_id=doc_id,
        status=status,
        chunks=chunks,
        modified_at=format_timestamp(int(doc["modified_at"])) or "",
        title=doc.get("title") or "",
        owner=doc["owner"],
        file_path=doc.get("file_path"),
        tags=list(doc.get("tags") or []),
        category=doc.get("category"),
        mime_type=doc.get("mime_type"),
        error=error,
    )


@router.get(
    "/{doc_type}/{doc_id}",
    response_model=DocumentStatus,
    responses={404: {"model": ErrorBody}, **ERRORS},
)
def get_document(
    doc_type: DocType, doc_id: DocId, engine: EngineDep, _: IndexerDep
) -> DocumentStatus:
    return _status(engine, doc_type, doc_id)


@router.delete(
    "/{doc_type}/{doc_id}", status_code=204, responses={404: {"model": ErrorBody}, **ERRORS}
)
def delete_document(doc_type: DocType, doc_id: DocId, engine: EngineDep, _: IndexerDep) -> Response:
    if not engine.indexer.delete(f"{doc_type}:{doc_id}"):
        raise NotFound(f"no document {doc_type}:{doc_id}")
    return Response(status_code=204)
