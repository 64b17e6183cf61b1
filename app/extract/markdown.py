"""Markdown: indexed as written (its words are the text a person searches for); the title is its
first heading (`# Title`, or `Title` underlined by `===` or `---`), or a `title:` line of YAML
front matter."""

import re
from pathlib import Path

from app.extract.model import Extracted, Format, unpaged
from app.extract.plaintext import read_text

_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
# A setext heading: a line of text underlined by = (level 1) or - (level 2).
_SETEXT = re.compile(r"^([^\s#>|`-][^\n]*?)[ \t]*\n(?:=+|-{2,})[ \t]*$", re.M)
_FRONT_MATTER_TITLE = re.compile(r"\A---\n(?:.*\n)*?title:[ \t]*['\"]?(.+?)['\"]?[ \t]*\n", re.M)


def extract(path: Path) -> Extracted:
    text = read_text(path)
    return unpaged(Format.MARKDOWN, text, title(text))


def title(text: str) -> str | None:
    front = _FRONT_MATTER_TITLE.match(text)
    if front:
        return front.group(1)
    head = text[:20_000]
    headings = [m for m in (_HEADING.search(head), _SETEXT.search(head)) if m is not None]
    return min(headings, key=lambda m: m.start()).group(1) if headings else None
