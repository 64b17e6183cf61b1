"""The text around a chunk, rebuilt from the document's chunks: each chunk is an exact slice of
the document with its offsets, and consecutive chunks overlap or touch (only whitespace lies
between them), so together they give the document's text at the right offsets."""

from bisect import bisect_right
from dataclasses import dataclass

from app.errors import InvalidRequest
from app.search.documents import ChunkContext

MAX_CONTEXT = 10_000


@dataclass(frozen=True)
class StoredChunk:
    index: int
    start: int
    end: int
    text: str
    page_number: int | None = None
    page_breaks: tuple[int, ...] = ()  # offsets in `text` where its later pages start


def document_text(chunks: list[StoredChunk]) -> str:
    """The document from offset 0 to its last chunk's end; a gap between chunks (whitespace in
    the original) is a space."""
    length = max((c.end for c in chunks), default=0)
    text = [" "] * length
    for chunk in chunks:
        text[chunk.start : chunk.end] = chunk.text
    return "".join(text)


def context_around(chunks: list[StoredChunk], start: int, end: int, context: int) -> ChunkContext:
    """`context` characters either side of `[start, end)`; the range must lie in the document."""
    if not 0 <= context <= MAX_CONTEXT:
        raise InvalidRequest(f"context must be 0..{MAX_CONTEXT}", "context")
    text = document_text(chunks)
    first = min((c.start for c in chunks), default=0)
    if not 0 <= start < end <= len(text):
        raise InvalidRequest(
            f"start and end must satisfy 0 <= start < end <= {len(text)} (the document's length)",
            "start" if not 0 <= start < len(text) else "end",
        )
    before_from = max(first, start - context)
    after_to = min(len(text), end + context)
    found = _chunk_at(chunks, start, end)
    return ChunkContext(
        chunk_text=text[start:end],
        before_context=text[before_from:start],
        after_context=text[end:after_to],
        has_more_before=before_from > first,
        has_more_after=after_to < len(text),
        chunk_index=found.index if found else 0,
        total_chunks=len(chunks),
        page_number=_page_at(found, start) if found else None,
    )


def _page_at(chunk: StoredChunk, offset: int) -> int | None:
    """The page holding `offset` (in the document) within `chunk`."""
    if chunk.page_number is None:
        return None
    return chunk.page_number + bisect_right(chunk.page_breaks, offset - chunk.start)


def _chunk_at(chunks: list[StoredChunk], start: int, end: int) -> StoredChunk | None:
    """The chunk with exactly these offsets, else the first one holding `start`."""
    for chunk in chunks:
        if (chunk.start, chunk.end) == (start, end):
            return chunk
    holding = [c for c in chunks if c.start <= start < c.end]
    return min(holding, key=lambda c: c.index, default=None)
