"""The document a client sends, validated as a whole batch before anything is written."""

import re
import time
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.errors import InvalidRequest, describe_validation
from app.filters.spec import clean_values, normalize_folder, parse_modified_timestamp

MAX_BATCH = 256
DOC_TYPE_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"
_ACL_ENTRY = re.compile(r"^(user|group):\S.*$")


class DocumentIn(BaseModel):
    """A document as `POST /api/v1/documents` takes it."""

    model_config = ConfigDict(extra="ignore")

    doc_type: str = Field(pattern=DOC_TYPE_PATTERN, examples=["file"])
    doc_id: str = Field(min_length=1, max_length=256, examples=["4711"])
    title: str = Field(default="", max_length=1000)
    content: str = Field(default="", max_length=5_000_000)
    owner: str = Field(min_length=1, max_length=256)
    modified_at: str | int | float | None = Field(
        default=None,
        description="RFC 3339 / ISO 8601 or Unix seconds; stored as int seconds. Default: now.",
        examples=["2026-05-04T10:00:00Z"],
    )
    file_path: str | None = Field(
        default=None, max_length=4096, description="Absolute, '/'-separated (files)."
    )
    tags: list[str] = Field(default_factory=list, max_length=256)
    category: str | None = Field(default=None, max_length=256)
    mime_type: str | None = Field(default=None, max_length=256)
    acl: list[str] = Field(
        default_factory=list, max_length=1024, description="`user:<id>` / `group:<id>` readers."
    )


class DocumentBatch(BaseModel):
    documents: list[dict[str, Any]] = Field(
        description=f"Up to {MAX_BATCH} documents (see DocumentIn)."
    )


@dataclass(frozen=True)
class Document:
    """A validated, normalized document: what the pipeline stores and indexes."""

    doc_type: str
    doc_id: str
    title: str
    content: str
    owner: str
    modified_at: int
    file_path: str | None
    tags: tuple[str, ...]
    category: str | None
    mime_type: str | None
    acl: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.doc_type}:{self.doc_id}"

    def to_payload(self) -> dict[str, Any]:
        data = asdict(self)
        data["tags"] = list(self.tags)
        data["acl"] = list(self.acl)
        return data

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> "Document":
        values = dict(data)
        values["tags"] = tuple(values.get("tags") or ())
        values["acl"] = tuple(values.get("acl") or ())
        return cls(**values)


def _fail(index: int, raw: Any, field: str, message: str) -> InvalidRequest:
    name = "?"
    if isinstance(raw, dict):
        name = f"{raw.get('doc_type', '?')}:{raw.get('doc_id', '?')}"
    path = f"documents[{index}].{field}" if field else f"documents[{index}]"
    return InvalidRequest(f"document {index} ({name}): {field or 'document'}: {message}", path)


def validate_document(index: int, raw: Any) -> Document:
    if not isinstance(raw, dict):
        raise _fail(index, raw, "", "must be a JSON object")
    try:
        doc = DocumentIn.model_validate(raw)
    except ValidationError as exc:
        message, field = describe_validation(exc.errors())
        raise _fail(index, raw, field or "", message.removeprefix(f"{field}: ")) from exc
    try:
        modified = parse_modified_timestamp(doc.modified_at, "modified_at")
    except InvalidRequest as exc:
        raise _fail(index, raw, "modified_at", exc.message) from exc
    return Document(
        doc_type=doc.doc_type,
        doc_id=doc.doc_id,
        title=doc.title,
        content=doc.content,
        owner=doc.owner,
        modified_at=int(time.time()) if modified is None else modified,
        file_path=_file_path(index, raw, doc.file_path),
        tags=clean_values(doc.tags),
        category=(doc.category.strip() or None) if doc.category else None,
        mime_type=doc.mime_type,
        acl=_acl(index, raw, doc.acl),
    )


def _file_path(index: int, raw: Any, path: str | None) -> str | None:
    if path is None or not path.strip():
        return None
    if not path.strip().startswith("/"):
        raise _fail(index, raw, "file_path", "must be absolute (start with '/')")
    if "\n" in path or "\x00" in path:
        raise _fail(index, raw, "file_path", "must not contain newlines or NUL")
    return normalize_folder(path)


def _acl(index: int, raw: Any, entries: list[str]) -> tuple[str, ...]:
    for entry in entries:
        if not _ACL_ENTRY.match(entry):
            raise _fail(index, raw, "acl", f"entry {entry!r} is not 'user:<id>' or 'group:<id>'")
    return clean_values(entries)


def validate_batch(raw_documents: list[Any]) -> list[Document]:
    """Every document valid, or a 400 naming the first bad one and its field; nothing written."""
    if not raw_documents:
        raise InvalidRequest("documents must hold at least one document", "documents")
    if len(raw_documents) > MAX_BATCH:
        raise InvalidRequest(
            f"at most {MAX_BATCH} documents per request, got {len(raw_documents)}", "documents"
        )
    return [validate_document(i, raw) for i, raw in enumerate(raw_documents)]
