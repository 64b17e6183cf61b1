"""A document as the pipeline stores and indexes it: validated and normalized (the wire model
that produces it is `app.ingest.models.DocumentIn`)."""

import hashlib
import json
from dataclasses import asdict, dataclass, replace
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
    # What it was made from (the text and metadata sent, or a file's bytes and metadata): a
    # resend with the same hash is acknowledged without extraction or embedding.
    content_hash: str | None = None

    @property
    def key(self) -> str:
        return fields.doc_key(self.doc_type, self.doc_id)

    def to_payload(self) -> dict[str, Any]:
        data = asdict(self)
        data["tags"] = list(self.tags)
        data["acl"] = list(self.acl)
        data["page_starts"] = list(self.page_starts)
        return data

    def with_hash(self) -> "Document":
        """The document carrying the hash of its text and metadata (kept if it has one)."""
        if self.content_hash is not None:
            return self
        return replace(self, content_hash=digest(self.to_payload()))

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> "Document":
        values = dict(data)
        values["tags"] = tuple(values.get("tags") or ())
        values["acl"] = tuple(values.get("acl") or ())
        values["page_starts"] = tuple(values.get("page_starts") or ())
        return cls(**values)


def with_labels(doc: Document, labels: Document) -> Document:
    """`doc` with the labels (everything but its text) of `labels`."""
    return replace(
        doc,
        title=labels.title,
        owner=labels.owner,
        acl=labels.acl,
        modified_at=labels.modified_at,
        file_path=labels.file_path,
        tags=labels.tags,
        category=labels.category,
        url=labels.url,
    )


def digest(value: Any) -> str:
    """A stable hash of JSON-like data."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class IndexCounts:
    documents: int  # indexed documents
    chunks: int  # searchable chunks
    pending: int  # accepted, waiting to be indexed
    failed: int  # accepted, indexing failed
