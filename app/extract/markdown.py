"""Markdown: indexed as written (its words are the text a person searches for); the title is its
first heading, or a `title:` line of YAML front matter."""

import re
from pathlib import Path

from app.extract.model import Extracted, Format, unpaged
from app.extract.plaintext import read_text

_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_FRONT_MATTER_TITLE = re.compile(r"\A---\n(?:.*\n)*?title:[ \t]*['\"]?(.+?)['\"]?[ \t]*\n", re.M)


def extract(path: Path) -> Extracted:
    text = read_text(path)
    return unpaged(Format.MARKDOWN, text, title(text))


def title(text: str) -> str | None:
    found = _FRONT_MATTER_TITLE.match(text) or _HEADING.search(text[:20_000])
    return found.group(1) if found else None
