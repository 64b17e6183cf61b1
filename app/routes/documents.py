"""Writing documents (scope `index`): accept a batch, read one's status, delete one."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from app.errors import ErrorBody
from app.ingest.models import DOC_TYPE_PATTERN, Accepted, DocumentBatch, DocumentStatus, Indexed
from app.routes.deps import IndexPrincipal, ServicesDep

router = APIRouter(prefix="/api/v1/documents", tags=["documents"])
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 413, 503)
}

DocType = Annotated[str, Path(pattern=DOC_TYPE_PATTERN)]
DocId = Annotated[str, Path(min_length=1, max_length=256)]


@router.post(
    "",
    status_code=202,
    response_model=None,  # one of two models, each declared under its status below
    responses={
        202: {"model": Accepted, "description": "Accepted: searchable soon."},
        200: {"model": Indexed, "description": "With ?wait=true: searchable now."},
        **ERRORS,
        429: {
            "model": ErrorBody,
            "description": "The ingest queue is full (SEARCH_MAX_PENDING): retry after"
            " Retry-After seconds.",
            "headers": {"Retry-After": {"description": "Seconds", "schema": {"type": "integer"}}},
        },
    },
)
async def post_documents(
    body: DocumentBatch,
    services: ServicesDep,
    _: IndexPrincipal,
    response: Response,
    wait: Annotated[bool, Query(description="Answer once the documents are searchable.")] = False,
) -> Accepted | Indexed:
    """Each document is at once a placeholder (never returned by search) until indexed; the
    placeholder is the persisted promise, so a restart resumes the work."""
    result = await services.ingest.submit(body, wait=wait)
    if isinstance(result, Indexed):
        response.status_code = 200
    return result


@router.get(
    "/{doc_type}/{doc_id}",
    response_model=DocumentStatus,
    responses={404: {"model": ErrorBody}, **ERRORS},
)
def get_document(
    doc_type: DocType, doc_id: DocId, services: ServicesDep, _: IndexPrincipal
) -> DocumentStatus:
    return services.ingest.status(doc_type, doc_id)


@router.delete(
    "/{doc_type}/{doc_id}", status_code=204, responses={404: {"model": ErrorBody}, **ERRORS}
)
def delete_document(
    doc_type: DocType, doc_id: DocId, services: ServicesDep, _: IndexPrincipal
) -> Response:
    services.ingest.delete(doc_type, doc_id)
    return Response(status_code=204)
