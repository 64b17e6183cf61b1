"""The ingest capability on the wire: the documents a client sends (validated as a whole batch
before anything is written) and what the document endpoints answer. Contract: docs/api.md."""

import re
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.errors import InvalidRequest, describe_validation
from app.filters.models import DateBound
from app.filters.spec import clean_values, format_timestamp, normalize_folder
from app.ingest.documents import Document
from app.store import fields
from app.unicode import ProperUnicode

MAX_BATCH = 256
DOC_TYPE_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"
_ACL_ENTRY = re.compile(r"^(user|group):\S.*$")


class DocumentIn(BaseModel):
    """A document as `POST /api/v1/documents` takes it. Re-sending one replaces it whole."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "doc_type": "file",
                    "doc_id": "4711",
                    "title": "Q3 report",
                    "content": "Revenue grew 12% in the third quarter ...",
                    "owner": "alice",
                    "modified_at": "2026-05-04T10:00:00Z",
                    "file_path": "/Projects/Reports/q3.md",
                    "tags": ["urgent", "finance"],
                    "mime_type": "text/markdown",
                    "acl": ["user:bob", "group:eng"],
                }
            ]
        },
    )

    doc_type: str = Field(
        pattern=DOC_TYPE_PATTERN, description="note, file, deck_card, news_item, ..."
    )
    doc_id: str = Field(min_length=1, max_length=256, description="Unique within its doc_type.")
    title: str = Field(default="", max_length=1000)
    content: str = Field(
        default="", max_length=5_000_000, description="The text to index; chunked here."
    )
    owner: str = Field(min_length=1, max_length=256)
    modified_at: DateBound = Field(default=None, description="Stored as int seconds. Default: now.")
    file_path: str | None = Field(
        default=None, max_length=4096, description="Files only: absolute, '/'-separated."
    )
    tags: list[str] = Field(default_factory=list, max_length=256)
    category: str | None = Field(default=None, max_length=256, description="Notes.")
    mime_type: str | None = Field(default=None, max_length=256)
    acl: list[str] = Field(
        default_factory=list,
        max_length=1024,
        description="Readers besides the owner: `user:<id>` / `group:<id>`.",
    )

    @field_validator("file_path")
    @classmethod
    def _absolute_path(cls, path: str | None) -> str | None:
        if path is None or not path.strip():
            return None
        if not path.strip().startswith("/"):
            raise ValueError("must be absolute (start with '/')")
        if "\n" in path or "\x00" in path:
            raise ValueError("must not contain newlines or NUL")
        return normalize_folder(path)

    @field_validator("acl")
    @classmethod
    def _readers(cls, entries: list[str]) -> list[str]:
        for entry in entries:
            if not _ACL_ENTRY.match(entry):
                raise ValueError(f"entry {entry!r} is not 'user:<id>' or 'group:<id>'")
        return entries

    def to_document(self) -> Document:
        return Document(
            doc_type=self.doc_type,
            doc_id=self.doc_id,
            title=self.title,
            content=self.content,
            owner=self.owner,
            modified_at=int(time.time()) if self.modified_at is None else self.modified_at,
            file_path=self.file_path,
            tags=clean_values(self.tags),
            category=(self.category.strip() or None) if self.category else None,
            mime_type=self.mime_type,
            acl=clean_values(self.acl),
        )


class DocumentBatch(ProperUnicode):
    """`POST /api/v1/documents`: every document valid, or a 400 naming the first bad one and
    its field; nothing of a rejected batch is written."""

    model_config = ConfigDict(extra="forbid")

    documents: list[DocumentIn] = Field(
        min_length=1, max_length=MAX_BATCH, description=f"1 to {MAX_BATCH} documents."
    )

    def to_documents(self) -> list[Document]:
        return [document.to_document() for document in self.documents]


def validate_batch(raw_documents: list[Any]) -> list[Document]:
    """Documents from outside HTTP (files, the demo corpus), under the same rules."""
    try:
        batch = DocumentBatch.model_validate({"documents": raw_documents})
    except ValidationError as exc:
        body = {"documents": raw_documents}
        raise InvalidRequest(*describe_validation(exc.errors(), body)) from exc
    return batch.to_documents()


class Accepted(BaseModel):
    """202: each document is a placeholder until indexed; a restart resumes the work."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"accepted": 2}]})

    accepted: int


class Indexed(BaseModel):
    """200 with `?wait=true`: the documents are searchable."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"indexed": 2, "chunks": 5}]})

    indexed: int
    chunks: int


class DocumentStatus(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "doc_type": "file",
                    "doc_id": "4711",
                    "status": "indexed",
                    "chunks": 3,
                    "modified_at": "2026-05-04T10:00:00Z",
                    "title": "Q3 report",
                    "owner": "alice",
                    "file_path": "/Projects/Reports/q3.md",
                    "tags": ["urgent", "finance"],
                    "category": None,
                    "mime_type": "text/markdown",
                    "error": None,
                }
            ]
        }
    )

    doc_type: str
    doc_id: str
    status: Literal["pending", "indexed", "failed"]
    chunks: int = Field(description="Searchable chunks (0 until indexed).")
    modified_at: str = Field(description="RFC 3339 UTC ending in Z.")
    title: str
    owner: str
    file_path: str | None
    tags: list[str]
    category: str | None
    mime_type: str | None
    error: str | None = Field(default=None, description="Why indexing failed.")

    @classmethod
    def of(
        cls, document: dict[str, Any], status: str, chunks: int, error: str | None
    ) -> "DocumentStatus":
        """From a stored document payload (a placeholder's document or a chunk)."""
        return cls(
            doc_type=document[fields.DOC_TYPE],
            doc_id=document[fields.DOC_ID],
            status=status,  # type: ignore[arg-type]
            chunks=chunks,
            modified_at=format_timestamp(int(document[fields.MODIFIED_AT])) or "",
            title=document.get(fields.TITLE) or "",
            owner=document[fields.OWNER],
            file_path=document.get(fields.FILE_PATH),
            tags=list(document.get(fields.TAGS) or []),
            category=document.get(fields.CATEGORY),
            mime_type=document.get(fields.MIME_TYPE),
            error=error,
        )
