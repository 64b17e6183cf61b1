"""A file as a document: the text an extractor read from it, with the metadata it came with.
Used by `POST /api/v1/files` and by `astrolabe-search ingest`."""

from dataclasses import replace
from pathlib import PurePath

from app.extract.errors import TooLarge
from app.extract.model import Extracted
from app.ingest.documents import Document
from app.ingest.models import MAX_CONTENT_CHARS, DocumentFields
from app.written import normalize, normalize_pages


def file_document(metadata: DocumentFields, extracted: Extracted, filename: str = "") -> Document:
    """The document of a file. Its title: the one sent, else the file's own, else its name
    (a placeholder such as "[no title]" or "Untitled" counts as none).
    A file without text (a scan) is recorded as such: indexed by its title, status no_text."""
    if len(extracted.text) > MAX_CONTENT_CHARS:
        raise TooLarge(
            f"the file holds {len(extracted.text)} characters of text, more than the"
            f" {MAX_CONTENT_CHARS} a document may hold: split it"
        )
    document = metadata.to_document()
    text, page_starts = (
        normalize_pages(extracted.text, extracted.page_starts) if extracted.has_text else ("", ())
    )
    return replace(
        document,
        content=text,
        title=_real(document.title) or _real(extracted.title) or _name_of(filename),
        mime_type=document.mime_type or extracted.mime_type,
        page_starts=page_starts,
        sealed_pages=extracted.sealed,
        no_text=not extracted.has_text,
        extraction=extracted.extraction,
    )


# What programs write where a title should be: a person reads the file name instead.
_PLACEHOLDER_TITLES = frozenset(
    {
        "[no title]",
        "no title",
        "(no title)",
        "untitled",
        "(untitled)",
        "[untitled]",
        "untitled document",
    }
)


def _real(title: str | None) -> str | None:
    """The title, unless it is empty or a placeholder."""
    title = " ".join(normalize(title or "").split())
    return title if title and title.lower() not in _PLACEHOLDER_TITLES else None


def _name_of(filename: str) -> str:
    """`reports/q3_final.pdf` -> `q3 final`."""
    stem = PurePath(filename.replace("\\", "/")).stem if filename else ""
    return " ".join(stem.replace("_", " ").split())[:1000]
