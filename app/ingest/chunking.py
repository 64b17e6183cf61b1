"""Split a document's text into chunks of about `max_words` words on sentence boundaries.

Words stand in for model tokens (MiniLM's 256 word pieces hold about 180 English words), so the
chunker does not depend on the model and gives the same chunks in every test. Each chunk is an
exact slice of the text with its character offsets, so the text around a chunk can be shown."""

import re
from dataclasses import dataclass

_WORD = re.compile(r"\S+")
_SENTENCE_END = (".", "!", "?")
OVERLAP_WORDS = 24
CHUNK_WORDS = 180  # recorded in index.json (app.store.index_format): a change needs a reindex


@dataclass(frozen=True)
class Chunk:
    text: str  # text[start:end] of the document, whitespace as written
    start: int
    end: int


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


def chunk_text(text: str, max_words: int = 180, overlap_words: int = OVERLAP_WORDS) -> list[str]:
    """The chunks' words, one space apart."""
    return [" ".join(c.text.split()) for c in chunk_spans(text, max_words, overlap_words)]
