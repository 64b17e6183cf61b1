"""The page of a match: where in a paged file the words of the query are.

A chunk is ~1,000 characters and a PDF page ~2,000, so half the chunks cross a page: the chunk's
first page is often the page before the sentence. The page of a hit is the page of the first
query word found in its chunk, else the page holding most of the chunk's text. Chunks indexed
before page breaks were kept name their first page."""

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from app.store import fields

_WORD = re.compile(r"\w+")


_SUFFIXES = ("ing", "ed", "es", "s")


def stem(word: str) -> str:
    """A word without its commonest English endings: "definitions" and "definition" meet."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def query_words(query: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _WORD.findall(query) if len(w) > 1)


def page_of_match(payload: Mapping[str, Any], words: frozenset[str]) -> int | None:
    first = payload.get(fields.PAGE_NUMBER)
    breaks: Sequence[int] = payload.get(fields.PAGE_BREAKS) or ()
    if first is None or not breaks:
        return first if first is None else int(first)
    text: str = payload.get(fields.TEXT) or ""
    at = _first_word_at(text, words)
    if at is None:
        bounds = [0, *breaks, len(text)]
        lengths = [b - a for a, b in pairwise(bounds)]
        return int(first) + lengths.index(max(lengths))
    return int(first) + bisect_right(breaks, at)


def page_at(payload: Mapping[str, Any], offset: int) -> int | None:
    """The page holding `offset` (a character offset into the chunk's text)."""
    first = payload.get(fields.PAGE_NUMBER)
    if first is None:
        return None
    return int(first) + bisect_right(payload.get(fields.PAGE_BREAKS) or (), offset)


def _first_word_at(text: str, words: frozenset[str]) -> int | None:
    if not words:
        return None
    for match in _WORD.finditer(text):
        if stem(match.group()) in words:
            return match.start()
    return None
