"""Rebuilding the text around a chunk from its document's chunks; the folder tree's levels."""

import pytest

from app.errors import InvalidRequest
from app.ingest.chunking import chunk_spans
from app.search.context import StoredChunk, context_around, document_text
from app.search.folders import child_folders

DOCUMENT = " ".join(f"Sentence number {i} of the document." for i in range(60))


def stored(text: str, max_words: int = 30, overlap: int = 5) -> list[StoredChunk]:
    spans = chunk_spans(text, max_words=max_words, overlap_words=overlap)
    return [StoredChunk(i, c.start, c.end, c.text) for i, c in enumerate(spans)]


def test_the_chunks_give_back_the_document() -> None:
    assert document_text(stored(DOCUMENT)) == DOCUMENT.rstrip()
    no_overlap = stored(DOCUMENT, overlap=0)
    assert document_text(no_overlap) == DOCUMENT.rstrip()


def test_context_is_the_text_either_side_of_the_chunk() -> None:
    chunks = stored(DOCUMENT)
    middle = chunks[2]
    found = context_around(chunks, middle.start, middle.end, 100)
    assert found.chunk_text == middle.text
    assert found.before_context == DOCUMENT[middle.start - 100 : middle.start]
    assert found.after_context == DOCUMENT[middle.end : middle.end + 100]
    assert found.has_more_before and found.has_more_after
    assert (found.chunk_index, found.total_chunks) == (2, len(chunks))


def test_context_stops_at_the_document_edges() -> None:
    chunks = stored(DOCUMENT)
    first, last = chunks[0], chunks[-1]
    at_start = context_around(chunks, first.start, first.end, 10_000)
    assert at_start.before_context == "" and not at_start.has_more_before
    at_end = context_around(chunks, last.start, last.end, 10_000)
    assert at_end.after_context == "" and not at_end.has_more_after
    assert at_end.chunk_index == len(chunks) - 1
    none = context_around(chunks, first.start, first.end, 0)
    assert none.before_context == none.after_context == ""
    assert none.has_more_after


@pytest.mark.parametrize(
    ("start", "end", "context", "field"),
    [(-1, 5, 10, "start"), (5, 5, 10, "end"), (0, 10**6, 10, "end"), (0, 5, 10_001, "context")],
)
def test_a_range_outside_the_document_is_refused(
    start: int, end: int, context: int, field: str
) -> None:
    with pytest.raises(InvalidRequest) as raised:
        context_around(stored(DOCUMENT), start, end, context)
    assert raised.value.field == field


def test_folder_levels_list_direct_children_with_their_counts() -> None:
    counts = {"/": 9, "/Projects": 6, "/Projects/Helios": 4, "/Projects/Helios/x": 1, "/HR": 3}
    top = child_folders("/", counts)
    assert [(n.name, n.count, n.has_children) for n in top] == [
        ("HR", 3, False),
        ("Projects", 6, True),
    ]
    below = child_folders("/Projects", counts)
    assert [(n.path, n.has_children) for n in below] == [("/Projects/Helios", True)]
    assert child_folders("/Projects/Helios/x", counts) == []
    assert child_folders("/Proj", counts) == []  # segment by segment, never by letters
