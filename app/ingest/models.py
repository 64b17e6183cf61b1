"""The ingest capability on the wire: the documents a client sends (validated as a whole batch
before anything is written) and what the document endpoints answer. Contract: docs/api.md."""

import re
import time
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator

from app.errors import InvalidRequest, describe_validation
from app.filters.models import DateBound
from app.filters.spec import clean_values, format_timestamp, normalize_folder
from app.ingest.documents import Document, IndexCounts
from app.store import fields
from app.unicode import ProperUnicode
from app.written import normalize

MAX_BATCH = 256
DOC_TYPE_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"
_ACL_ENTRY = re.compile(r"^(user|group):\S.*$")


MAX_CONTENT_CHARS = 5_000_000


class DocumentFields(BaseModel):
    """A document's fields besides its text: what `POST /api/v1/files` takes as metadata."""

    model_config = ConfigDict(extra="forbid")

    doc_type: str = Field(
        pattern=DOC_TYPE_PATTERN, description="note, file, deck_card, news_item, ..."
    )
    doc_id: str = Field(min_length=1, max_length=256, description="Unique within its doc_type.")
    title: str = Field(default="", max_length=1000)
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
    url: str | None = Field(
        default=None,
        max_length=4096,
        description="The document's own link (http or https only). Without one,"
        " SEARCH_LINK_TEMPLATE_<DOC_TYPE> builds it.",
    )

    @field_validator("url")
    @classmethod
    def _web_link(cls, url: str | None) -> str | None:
        if url is None or not url.strip():
            return None
        return web_url(url.strip())

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

    def to_document(self, content: str = "") -> Document:
        return Document(
            doc_type=self.doc_type,
            doc_id=self.doc_id,
            title=normalize(self.title),
            content=normalize(content),
            owner=self.owner,
            modified_at=int(time.time()) if self.modified_at is None else self.modified_at,
            file_path=self.file_path,
            tags=clean_values(self.tags),
            category=(self.category.strip() or None) if self.category else None,
            mime_type=self.mime_type,
            acl=clean_values(self.acl),
            url=self.url,
        )


class DocumentIn(DocumentFields):
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

    content: str = Field(
        default="", max_length=MAX_CONTENT_CHARS, description="The text to index; chunked here."
    )

    def to_document(self, content: str | None = None) -> Document:
        return super().to_document(self.content if content is None else content)


def web_url(url: str) -> str:
    """`url` if it is an absolute http(s) link a browser may open; ValueError otherwise (a
    `javascript:` or `data:` link must never reach a page)."""
    if any(ord(char) <= 0x20 or ord(char) == 0x7F for char in url):
        raise ValueError("must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ValueError(f"is not a valid URL: {exc}") from exc
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an absolute http or https URL")
    return url


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


class Progress(BaseModel):
    """Where a document that is being worked on stands."""

    stage: Literal["extracting", "queued", "embedding"] = Field(
        description="extracting: a file's text is being read; queued: waiting for the indexer;"
        " embedding: its chunks are being embedded."
    )
    chunks_embedded: int | None = Field(default=None, description="While embedding.")
    chunks_total: int | None = Field(default=None, description="While embedding.")


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
    status: Literal["pending", "indexed", "failed", "no_text"] = Field(
        description="no_text: indexed, but the file had no text to extract (a scan without a"
        " text layer): only its title is searchable."
    )
    chunks: int = Field(description="Searchable chunks (0 until indexed).")
    modified_at: str = Field(description="RFC 3339 UTC ending in Z.")
    title: str
    owner: str
    file_path: str | None
    tags: list[str]
    category: str | None
    mime_type: str | None
    url: str | None = Field(default=None, description="The link it was sent with, if any.")
    page_count: int | None = Field(
        default=None, description="Pages, slides or sheets of a paged file; null otherwise."
    )
    error: str | None = Field(default=None, description="Why indexing failed.")
    progress: Progress | None = Field(
        default=None,
        description="While a new version is being worked on (large files: poll this instead of"
        " holding a `?wait=true` request); null otherwise.",
    )
    extraction: Literal["text", "ocr", "mixed"] | None = Field(
        default=None,
        description="How a file's text was obtained (mixed: some pages by OCR); null for a"
        " document sent as text.",
    )

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
            url=document.get(fields.URL),
            page_count=document.get(fields.PAGE_COUNT)
            or len(document.get("page_starts") or ())
            or None,
            error=error,
            extraction=document.get(fields.EXTRACTION),
        )


class FileMetadata(ProperUnicode, DocumentFields):
    """The `metadata` of `POST /api/v1/files`: the document's fields; the file is its content.
    `title` defaults to the file's own title (its metadata, `<title>`, first heading or subject),
    else its name; `mime_type` to the detected format's."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "doc_id": "4711",
                    "owner": "alice",
                    "file_path": "/Projects/Reports/q3.pdf",
                    "modified_at": "2026-05-04T10:00:00Z",
                    "acl": ["group:eng"],
                    "url": "https://cloud.example/f/4711",
                }
            ]
        },
    )

    doc_type: str = Field(default="file", pattern=DOC_TYPE_PATTERN, description="Default: file.")


class FileFacts(BaseModel):
    """What the service read from an uploaded file."""

    doc_type: str
    doc_id: str
    format: str = Field(
        description="The format found in the content: pdf, docx, pptx, xlsx, odt, ods, odp,"
        " html, markdown, text, eml, doc, rtf, epub, msg, csv, tsv, or an image read by OCR"
        " (png, jpeg, tiff, webp, heic)."
    )
    mime_type: str = Field(description="The MIME type stored with the document.")
    page_count: int | None = Field(
        description="PDF pages, slides, sheets or EPUB chapters; null for unpaged formats."
    )
    characters: int = Field(description="Characters of text extracted (what is indexed).")
    status: Literal["pending", "indexed", "no_text"] = Field(
        description="no_text: the file holds no text (a scan without a text layer); the document"
        " is recorded with that status and only its title is searchable."
    )


FILE_EXAMPLE: dict[str, JsonValue] = {
    "doc_type": "file",
    "doc_id": "4711",
    "format": "pdf",
    "mime_type": "application/pdf",
    "page_count": 12,
    "characters": 23817,
}


class FileAccepted(FileFacts, Accepted):
    """202: the file's text is queued (a placeholder holds it: a restart never needs the file)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"accepted": 1, **FILE_EXAMPLE, "status": "pending"}]}
    )


class FileIndexed(FileFacts, Indexed):
    """200 with `?wait=true`: the file is searchable."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"indexed": 1, "chunks": 18, **FILE_EXAMPLE, "status": "indexed"}]
        }
    )


MAX_PURGE_TYPES = 20


class PurgeRequest(ProperUnicode):
    """`POST /api/v1/vector-sync/purge`."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"doc_types": ["note"]}]}
    )

    doc_types: list[Annotated[str, Field(pattern=DOC_TYPE_PATTERN)]] = Field(
        min_length=1, max_length=MAX_PURGE_TYPES, description=f"1 to {MAX_PURGE_TYPES} doc types."
    )


class PurgeResponse(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"purged": {"note": 12}}]})

    purged: dict[str, int] = Field(
        description="Documents removed per doc type (indexed, or accepted and waiting)."
    )


class SyncStatus(BaseModel):
    """`GET /api/v1/vector-sync/status`, the fields the Astrolabe app reads."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "status": "idle",
                    "indexed_documents": 1204,
                    "indexed_chunks": 5311,
                    "pending_documents": 0,
                    "failed_documents": 0,
                }
            ]
        }
    )

    status: Literal["idle", "syncing"] = Field(
        description="syncing: documents are waiting to be indexed, or a purge runs."
    )
    indexed_documents: int
    indexed_chunks: int
    pending_documents: int = Field(description="Accepted, waiting to be indexed.")
    failed_documents: int = Field(description="Accepted, indexing failed.")

    @classmethod
    def of(cls, counts: IndexCounts, syncing: bool) -> "SyncStatus":
        return cls(
            status="syncing" if syncing else "idle",
            indexed_documents=counts.documents,
            indexed_chunks=counts.chunks,
            pending_documents=counts.pending,
            failed_documents=counts.failed,
        )
