"""A document as the pipeline stores and indexes it: validated and normalized (the wire model
that produces it is `app.ingest.models.DocumentIn`)."""

from dataclasses import asdict, dataclass
from typing import Any

from app.store import fields


@dataclass(frozen=True)
class Document:
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
    url: str | None = None
    # A paged file's pages (PDF), slides or sheets: where each starts in `content`. Chunks never
    # span two `sealed` pages (slides, sheets).
    page_starts: tuple[int, ...] = ()
    sealed_pages: bool = False
    no_text: bool = False  # a file without text (a scan): `content` is empty
    extraction: str | None = None  # a file's: text | ocr | mixed; None for a document sent as text

    @property
    def key(self) -> str:
        return fields.doc_key(self.doc_type, self.doc_id)

    def to_payload(self) -> dict[str, Any]:
        data = asdict(self)
        data["tags"] = list(self.tags)
        data["acl"] = list(self.acl)
        data["page_starts"] = list(self.page_starts)
        return data

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> "Document":
        values = dict(data)
        values["tags"] = tuple(values.get("tags") or ())
        values["acl"] = tuple(values.get("acl") or ())
        values["page_starts"] = tuple(values.get("page_starts") or ())
        return cls(**values)


@dataclass(frozen=True)
class IndexCounts:
    documents: int  # indexed documents
    chunks: int  # searchable chunks
    pending: int  # accepted, waiting to be indexed
    failed: int  # accepted, indexing failed
