"""Receiving one file over HTTP, into a temporary file, never past the size limit: either
`multipart/form-data` (a `file` part and a `metadata` JSON part) or the raw body with the
metadata in query parameters. Bad metadata is a 400 before any extraction starts."""

import asyncio
import json
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from starlette.datastructures import QueryParams, UploadFile
from starlette.requests import Request

from app.errors import InvalidRequest, describe_validation
from app.extract.errors import TooLarge
from app.ingest.models import FileMetadata
from app.params import refuse_repeated

MAX_METADATA_BYTES = 1024 * 1024
# Above the file itself, what a multipart body may add: the metadata part and the part headers.
MULTIPART_OVERHEAD = MAX_METADATA_BYTES + 64 * 1024
LIST_FIELDS = ("tags", "acl")
NOT_METADATA = ("wait",)


@dataclass(frozen=True)
class ReceivedFile:
    path: Path
    filename: str
    mime_type: str | None  # what the client declared (a hint for Markdown against plain text)
    metadata: FileMetadata


@asynccontextmanager
async def received_file(request: Request, max_bytes: int) -> AsyncIterator[ReceivedFile]:
    """The upload in a temporary file that is gone once the block ends."""
    with tempfile.TemporaryDirectory(prefix="astrolabe-upload-") as folder:
        target = Path(folder) / "upload"
        content_type = request.headers.get("content-type", "")
        if content_type.lower().startswith("multipart/form-data"):
            yield await _from_multipart(request, target, max_bytes)
        else:
            yield await _from_body(request, target, max_bytes)


def too_large(max_bytes: int) -> TooLarge:
    return TooLarge(f"the file is larger than {max_bytes} bytes (SEARCH_MAX_FILE_BYTES)")


async def _from_body(request: Request, target: Path, max_bytes: int) -> ReceivedFile:
    metadata = _metadata(_query_fields(request.query_params), prefix="")
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > max_bytes:
        raise too_large(max_bytes)
    size = 0
    with target.open("wb") as out:
        async for piece in request.stream():
            size += len(piece)
            if size > max_bytes:
                raise too_large(max_bytes)
            out.write(piece)
    if size == 0:
        raise InvalidRequest("the request body is empty: send the file's bytes", "file")
    disposition = request.headers.get("content-disposition", "")
    return ReceivedFile(target, _filename(disposition), _declared(request), metadata)


async def _from_multipart(request: Request, target: Path, max_bytes: int) -> ReceivedFile:
    stray = sorted(set(request.query_params.keys()) - set(NOT_METADATA))
    if stray:  # never silently ignored: the part is where multipart metadata goes
        raise InvalidRequest(
            f"query parameter '{stray[0]}': a multipart upload sends its metadata in the part"
            " 'metadata'",
            stray[0],
        )
    async with request.form(max_files=1, max_fields=1, max_part_size=MAX_METADATA_BYTES) as form:
        unknown = sorted(set(form.keys()) - {"file", "metadata"})
        if unknown:
            raise InvalidRequest(
                f"unknown part '{unknown[0]}': send 'file' and 'metadata'", unknown[0]
            )
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidRequest("a part 'file' holding the file is required", "file")
        metadata = _metadata(await _json_part(form.get("metadata")), prefix="metadata")
        if upload.size is not None and upload.size > max_bytes:
            raise too_large(max_bytes)
        await asyncio.to_thread(_copy, upload, target)
        if target.stat().st_size == 0:
            raise InvalidRequest("the part 'file' is empty", "file")
        return ReceivedFile(target, upload.filename or "", upload.content_type, metadata)


def _copy(upload: UploadFile, target: Path) -> None:
    upload.file.seek(0)
    with target.open("wb") as out:
        shutil.copyfileobj(upload.file, out, 1024 * 1024)


async def _json_part(part: str | UploadFile | None) -> Any:
    if part is None:
        raise InvalidRequest(
            "a part 'metadata' is required: a JSON object with doc_id, owner, ...", "metadata"
        )
    raw = await part.read(MAX_METADATA_BYTES + 1) if isinstance(part, UploadFile) else part
    if len(raw) > MAX_METADATA_BYTES:
        raise InvalidRequest(f"the part 'metadata' is over {MAX_METADATA_BYTES} bytes", "metadata")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidRequest(f"the part 'metadata' is not valid JSON: {exc}", "metadata") from exc


def _query_fields(params: QueryParams) -> dict[str, Any]:
    refuse_repeated(params, LIST_FIELDS)
    fields: dict[str, Any] = {}
    for name in dict.fromkeys(params.keys()):
        if name in NOT_METADATA:
            continue
        fields[name] = params.getlist(name) if name in LIST_FIELDS else params[name]
    return fields


def _metadata(raw: Any, prefix: str) -> FileMetadata:
    if not isinstance(raw, Mapping):
        raise InvalidRequest("the metadata must be a JSON object", prefix or None)
    try:
        return FileMetadata.model_validate(dict(raw))
    except ValidationError as exc:
        message, field = describe_validation(exc.errors())
        named = f"{prefix}.{field}" if prefix and field else (field or prefix or None)
        if prefix and field and message.startswith(field):
            message = f"{prefix}.{message}"
        raise InvalidRequest(message, named) from exc


def _filename(disposition: str) -> str:
    if not disposition:
        return ""
    header = Message()
    header["content-disposition"] = disposition
    return header.get_filename() or ""


def _declared(request: Request) -> str | None:
    content_type = request.headers.get("content-type")
    if not content_type or content_type.startswith("application/octet-stream"):
        return None
    return content_type
