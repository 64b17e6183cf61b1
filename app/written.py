"""One normalisation of text, for every extractor's output, every document sent as text and
every query, so that a word is found however its file spelt it:

- Unicode compatibility forms folded (NFKC): the ligatures U+FB00-FB06 of a browser-printed PDF
  ("ﬁle" -> "file"), full-width letters and digits;
- soft hyphens and zero-width characters removed (a soft hyphen at a line end joins the word);
- a word hyphenated at a line end joined back ("cre-\\nated" -> "created"), only lowercase
  before and after the hyphen ("64-\\nbit" and "Jean-\\nPaul" stay), and kept hyphenated where
  the document writes that compound with its hyphen elsewhere and never joined
  ("floating-\\npoint" -> "floating-point")."""

import re
import unicodedata
from collections.abc import Sequence
from itertools import pairwise

_SOFT_HYPHEN_BREAK = re.compile("\u00ad[ \t]*\n[ \t]*")
_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")
_LINE_END_HYPHEN = re.compile(r"(\w+)-[ \t]*\n[ \t]*(\w+)")
_COMPOUND = re.compile(r"(\w+)-(\w+)")
_WORD = re.compile(r"\w+")


def normalize(text: str) -> str:
    """`text` as it is indexed and searched."""
    folded = _fold(text)
    return Hyphenation(folded).join(folded)


def normalize_pages(text: str, page_starts: Sequence[int]) -> tuple[str, tuple[int, ...]]:
    """A paged text normalised page by page (a page's length changes, so its start moves);
    the hyphenation rules read the whole document."""
    if not page_starts:
        return normalize(text), ()
    folded = _fold(text)
    hyphenation = Hyphenation(folded)
    bounds = [0, *page_starts, len(text)]
    pieces = [hyphenation.join(_fold(text[a:b])) for a, b in pairwise(bounds)]
    starts, length = [], len(pieces[0])
    for piece in pieces[1:]:
        starts.append(length)
        length += len(piece)
    return "".join(pieces), tuple(starts)


def _fold(text: str) -> str:
    text = _INVISIBLE.sub("", _SOFT_HYPHEN_BREAK.sub("", text))
    return unicodedata.normalize("NFKC", text) if not text.isascii() else text


class Hyphenation:
    """Which line-end hyphens of a document to drop: its own words decide."""

    def __init__(self, document: str) -> None:
        has_breaks = "-\n" in document or _LINE_END_HYPHEN.search(document) is not None
        self._words = {w.lower() for w in _WORD.findall(document)} if has_breaks else set()
        self._compounds = (
            {f"{a}-{b}".lower() for a, b in _COMPOUND.findall(document)} if has_breaks else set()
        )

    def join(self, text: str) -> str:
        if "\n" not in text or "-" not in text:
            return text
        return _LINE_END_HYPHEN.sub(self._joined, text)

    def _joined(self, match: re.Match[str]) -> str:
        head, tail = match.group(1), match.group(2)
        if not (head[-1].islower() and tail[0].islower()):
            return match.group(0)
        compound = f"{head}-{tail}"
        if compound.lower() in self._compounds and (head + tail).lower() not in self._words:
            return compound
        return head + tail
