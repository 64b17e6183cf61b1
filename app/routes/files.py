"""Uploading one file (scope `index`): its text is extracted here and indexed as a document."""

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from app.errors import ErrorBody
from app.ingest.models import FileAccepted, FileIndexed, FileMetadata
from app.ingest.receive import received_file
from app.routes.deps import IndexPrincipal, ServicesDep, StateDep

FILES_PATH = "/api/v1/files"
router = APIRouter(prefix=FILES_PATH, tags=["documents"])


def _metadata_parameters() -> list[dict[str, Any]]:
    """The metadata fields as query parameters (raw-body uploads), as the model documents them."""
    schema = FileMetadata.model_json_schema()
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "in": "query",
            "required": False,
            "schema": field,
            "description": (
                "Raw-body uploads only (multipart sends it in `metadata`)"
                + ("; required there." if name in required else ".")
            ),
        }
        for name, field in schema["properties"].items()
    ]


def _request_body() -> dict[str, Any]:
    metadata = FileMetadata.model_json_schema()
    return {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file", "metadata"],
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "metadata": metadata,
                    },
                },
                "encoding": {"metadata": {"contentType": "application/json"}},
            },
            "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
        },
    }


@router.post(
    "",
    status_code=202,
    response_model=None,
    openapi_extra={"requestBody": _request_body(), "parameters": _metadata_parameters()},
    responses={
        202: {"model": FileAccepted, "description": "Accepted: its text is queued."},
        200: {"model": FileIndexed, "description": "With ?wait=true: searchable now."},
        **{code: {"model": ErrorBody} for code in (400, 401, 403, 503)},
        413: {
            "model": ErrorBody,
            "description": "Over SEARCH_MAX_FILE_BYTES, or an archive (DOCX, XLSX, PPTX,"
            " OpenDocument) that expands past SEARCH_MAX_ARCHIVE_BYTES or holds more than"
            " SEARCH_MAX_ARCHIVE_ENTRIES entries. Nothing is stored.",
        },
        422: {
            "model": ErrorBody,
            "description": "The file cannot be read; `code` says why: `encrypted`"
            " (password-protected), `unreadable` (damaged, or not read within"
            " SEARCH_EXTRACT_TIMEOUT) or `unsupported_format`. Nothing is stored.",
        },
        429: {
            "model": ErrorBody,
            "description": "The ingest queue, or the files waiting to be read, are full: retry"
            " after Retry-After seconds.",
            "headers": {"Retry-After": {"description": "Seconds", "schema": {"type": "integer"}}},
        },
    },
)
async def post_file(
    request: Request,
    state: StateDep,
    services: ServicesDep,
    _: IndexPrincipal,
    response: Response,
    wait: Annotated[bool, Query(description="Answer once the file is searchable.")] = False,
) -> FileAccepted | FileIndexed:
    """One file: `multipart/form-data` with a part `file` and a part `metadata` (a JSON object:
    the fields of a document without `content`), or the raw file as the body with the metadata
    in query parameters. Its format is found from its content (PDF, DOCX, PPTX, XLSX, ODT, ODS,
    ODP, HTML, Markdown, plain text, EML, DOC, RTF, EPUB, MSG, CSV, TSV; scanned PDF pages and
    images (PNG, JPEG, TIFF, WebP, HEIC) by OCR; a mail's attachments with it); PDF pages,
    slides, sheets and EPUB chapters become the results' `page_number`. A file without text
    is recorded with status `no_text`. Send large files without `?wait=true` and poll
    `GET /api/v1/documents/{doc_type}/{doc_id}` (its `progress`); a file sent again as it is
    indexed is acknowledged without any work."""
    async with received_file(request, state.settings.max_file_bytes) as upload:
        result = await services.ingest.submit_file(
            upload.metadata,
            upload.path,
            filename=upload.filename,
            mime_type=upload.mime_type,
            wait=wait,
        )
    if isinstance(result, FileIndexed):
        response.status_code = 200
    return result
