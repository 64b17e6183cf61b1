"""Split a document's text into chunks of about `max_words` words on sentence boundaries.

Words stand in for model tokens (MiniLM's 256 word pieces hold about 180 English words), so the
chunker does not depend on the model and gives the same chunks in every test. Each chunk is an
exact slice of the text with its character offsets, so the text around a chunk can be shown."""

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.index_settings import CHUNK_WORDS

_WORD = re.compile(r"\S+")
_SENTENCE_END = (".", "!", "?")
OVERLAP_WORDS = 24


@dataclass(frozen=True)
class Chunk:
    text: str  # text[start:end] of the document, whitespace as written
    start: int
    end: int
    page_number: int | None = None  # paged documents: the page it starts on (1-based)
    page_end: int | None = None  # and the page it ends on
    # Where each later page starts, as an offset into `text` (page_end - page_number of them).
    page_breaks: tuple[int, ...] = ()


def _sentences(text: str) -> list[list[re.Match[str]]]:
    """Words grouped into sentences: a sentence ends after `.`, `!` or `?`, or at a blank line."""
    sentences: list[list[re.Match[str]]] = []
    current: list[re.Match[str]] = []
    for word in _WORD.finditer(text):
        if current:
            gap = text[current[-1].end() : word.start()]
            if current[-1].group().endswith(_SENTENCE_END) or "\n\n" in gap:
                sentences.append(current)
                current = []
        current.append(word)
    if current:
        sentences.append(current)
    return sentences


def chunk_spans(
    text: str, max_words: int = CHUNK_WORDS, overlap_words: int = OVERLAP_WORDS
) -> list[Chunk]:
    """Pack whole sentences into chunks; split a sentence only when it alone is too long.
    Each chunk after the first starts with the tail of the previous one (the overlap)."""
    pieces = [
        sentence[start : start + max_words]
        for sentence in _sentences(text)
        for start in range(0, len(sentence), max_words)
    ]
    groups: list[list[re.Match[str]]] = []
    current: list[re.Match[str]] = []
    for piece in pieces:
        if current and len(current) + len(piece) > max_words:
            groups.append(current)
            tail = current[-overlap_words:] if overlap_words else []
            current = tail if len(tail) + len(piece) <= max_words else []
        current = current + piece
    if current:
        groups.append(current)
    if not groups:
        return [Chunk("", 0, 0)]
    return [Chunk(text[g[0].start() : g[-1].end()], g[0].start(), g[-1].end()) for g in groups]


def chunk_text(
    text: str, max_words: int = CHUNK_WORDS, overlap_words: int = OVERLAP_WORDS
) -> list[str]:
    """The chunks' words, one space apart."""
    return [" ".join(c.text.split()) for c in chunk_spans(text, max_words, overlap_words)]


def chunk_pages(
    text: str,
    page_starts: Sequence[int],
    sealed: bool,
    max_words: int = CHUNK_WORDS,
    overlap_words: int = OVERLAP_WORDS,
) -> list[Chunk]:
    """Chunks of a paged document (`page_starts`: where each page starts in `text`), each with
    the pages it lies on. `sealed` pages (slides, sheets) are chunked one by one, so no chunk
    spans two; other pages (PDF) are chunked as one text, so a sentence may run across a break."""
    if not page_starts:
        return chunk_spans(text, max_words, overlap_words)
    if not sealed:
        return [
            replace(
                c,
                page_number=_page_at(page_starts, c.start),
                page_end=_page_at(page_starts, max(c.start, c.end - 1)),
                page_breaks=tuple(s - c.start for s in page_starts if c.start < s < c.end),
            )
            for c in chunk_spans(text, max_words, overlap_words)
        ]
    chunks = []
    ends = [*page_starts[1:], len(text)]
    for number, (start, end) in enumerate(zip(page_starts, ends, strict=True), 1):
        for c in chunk_spans(text[start:end], max_words, overlap_words):
            if c.text:
                chunks.append(Chunk(c.text, start + c.start, start + c.end, number, number))
    return chunks or [Chunk("", 0, 0)]


def _page_at(page_starts: Sequence[int], offset: int) -> int:
    """The 1-based page holding `offset`."""
    return max(1, bisect_right(page_starts, offset))
