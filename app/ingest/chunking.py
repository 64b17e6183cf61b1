"""Split a document's text into chunks of about `max_words` words on sentence boundaries.

Words stand in for model tokens (MiniLM's 256 word pieces hold about 180 English words), so the
chunker does not depend on the model and gives the same chunks in every test."""

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n{2,}")
OVERLAP_WORDS = 24


def _sentences(text: str) -> list[list[str]]:
    return [words for part in _SENTENCE_END.split(text) if (words := part.split())]


def chunk_text(text: str, max_words: int = 180, overlap_words: int = OVERLAP_WORDS) -> list[str]:
    """Pack whole sentences into chunks; split a sentence only when it alone is too long.
    Each chunk after the first starts with the tail of the previous one (the overlap)."""
    pieces: list[list[str]] = []
    for sentence in _sentences(text):
        for start in range(0, len(sentence), max_words):
            pieces.append(sentence[start : start + max_words])
    chunks: list[list[str]] = []
    current: list[str] = []
    for piece in pieces:
        if current and len(current) + len(piece) > max_words:
            chunks.append(current)
            tail = current[-overlap_words:] if overlap_words else []
            current = tail if len(tail) + len(piece) <= max_words else []
        current = current + piece
    if current:
        chunks.append(current)
    return [" ".join(words) for words in chunks] or [""]
