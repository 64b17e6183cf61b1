"""HTML (lxml's HTML parser, which reads broken markup as browsers do): the visible text, with a
line break around every block element and a blank line around paragraphs and headings; scripts,
styles and the head left out; the title from `<title>`."""

import re
from pathlib import Path

import lxml.html
from lxml import etree

from app.extract.model import Extracted, Format, unpaged

_INVISIBLE = ("script", "style", "noscript", "template", "head", "svg", "iframe", "object")
_PARAGRAPHS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "table"})
_LINES = frozenset(
    {"br", "div", "li", "tr", "dt", "dd", "ul", "ol", "section", "article", "header", "footer"}
    | {"nav", "aside", "main", "form", "figure", "figcaption", "hr", "title", "address"}
)
_CELLS = frozenset({"td", "th"})
_BLANKS = re.compile(r"\n{3,}")


def extract(path: Path) -> Extracted:
    return html_text(path.read_bytes())


def html_text(raw: bytes | str, format: Format = Format.HTML) -> Extracted:
    markup = _utf8_or_bytes(raw) if isinstance(raw, bytes) else raw
    if isinstance(markup, str):  # lxml refuses decoded text that still declares an encoding
        markup = _XML_DECLARATION.sub("", markup, count=1)
    if not markup.strip():
        return unpaged(format, "")
    try:
        root = lxml.html.document_fromstring(markup)
    except (etree.ParserError, ValueError):
        return unpaged(format, "")
    title = root.findtext(".//title")
    hidden = [element for element in root.iter(*_INVISIBLE) if element is not root]
    for element in hidden:
        if isinstance(element, lxml.html.HtmlElement):
            element.drop_tree()  # keeps the text after the element
    parts: list[str] = []
    _walk(root, parts)
    lines = (" ".join(line.split()).removesuffix(" |") for line in "".join(parts).split("\n"))
    return unpaged(format, _BLANKS.sub("\n\n", "\n".join(lines)), title)


_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")


def _utf8_or_bytes(raw: bytes) -> bytes | str:
    """UTF-8 as text; anything else stays bytes, for the parser to decode by its <meta charset>."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw


def _walk(element: etree._Element, parts: list[str]) -> None:
    tag = element.tag if isinstance(element.tag, str) else ""
    gap = "\n\n" if tag in _PARAGRAPHS else "\n" if tag in _LINES else ""
    parts.append(gap)
    if tag:  # comments and processing instructions have no text of their own here
        parts.append(element.text or "")
        for child in element:
            _walk(child, parts)
    parts.append(" | " if tag in _CELLS else gap)
    parts.append(element.tail or "")
