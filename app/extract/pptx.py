"""PowerPoint (python-pptx): one page per slide, its title first, then every text frame and table
in the slide's order (groups opened), then the speaker notes."""

from collections.abc import Iterable, Iterator
from pathlib import Path

import pptx
from pptx.shapes.base import BaseShape
from pptx.shapes.graphfrm import GraphicFrame
from pptx.shapes.group import GroupShape
from pptx.slide import Slide

from app.extract.model import Extracted, Format, paged


def extract(path: Path) -> Extracted:
    presentation = pptx.Presentation(str(path))
    slides = [_slide(slide) for slide in presentation.slides]
    title = presentation.core_properties.title or None
    return paged(Format.PPTX, slides, title)


def _slide(slide: Slide) -> str:
    title = slide.shapes.title
    title_id = title.shape_id if title is not None else None
    parts = [title.text_frame.text] if title is not None and title.has_text_frame else []
    parts += [
        text
        for shape in _shapes(slide.shapes)
        if shape.shape_id != title_id
        for text in _texts(shape)
    ]
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        if notes is not None and notes.text.strip():
            parts.append(notes.text)
    return "\n".join(part.strip() for part in parts if part.strip())


def _shapes(shapes: Iterable[BaseShape]) -> Iterator[BaseShape]:
    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _texts(shape: BaseShape) -> Iterator[str]:
    if shape.has_text_frame:
        yield shape.text_frame.text  # type: ignore[attr-defined]
    elif isinstance(shape, GraphicFrame) and shape.has_table:
        for row in shape.table.rows:
            cells = [" ".join(cell.text.split()) for cell in row.cells]
            if any(cells):
                yield " | ".join(cells)
