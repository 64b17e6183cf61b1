"""Chunks are exact slices of the document with their character offsets."""

import itertools

from hypothesis import given
from hypothesis import strategies as st

from app.ingest.chunking import chunk_spans, chunk_text

TEXT = (
    "First sentence here.  Second one\nwraps a line!\n\nA new paragraph starts, and it goes on"
    " for a while? Yes. " * 12
)


def test_each_chunk_is_the_slice_its_offsets_name() -> None:
    chunks = chunk_spans(TEXT, max_words=20, overlap_words=4)
    assert len(chunks) > 3
    for chunk in chunks:
        assert TEXT[chunk.start : chunk.end] == chunk.text
        assert chunk.text == chunk.text.strip()
    # consecutive chunks overlap or touch: only whitespace lies between them
    for before, after in itertools.pairwise(chunks):
        assert after.start <= before.end or not TEXT[before.end : after.start].strip()


def test_words_and_boundaries_are_those_of_chunk_text() -> None:
    spans = chunk_spans(TEXT, max_words=20, overlap_words=4)
    assert [" ".join(c.text.split()) for c in spans] == chunk_text(
        TEXT, max_words=20, overlap_words=4
    )


def test_blank_text_is_one_empty_chunk_at_zero() -> None:
    [chunk] = chunk_spans("  \n ")
    assert (chunk.text, chunk.start, chunk.end) == ("", 0, 0)


@given(
    st.lists(st.sampled_from(["word", "end.", "why?", "\n\n", " ", "\t", "x!"]), max_size=200),
    st.integers(1, 30),
    st.integers(0, 10),
)
def test_every_word_of_the_text_is_in_a_chunk_at_its_offset(
    tokens: list[str], max_words: int, overlap: int
) -> None:
    text = " ".join(tokens)
    chunks = chunk_spans(text, max_words=max_words, overlap_words=overlap)
    covered: set[int] = set()
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
        covered.update(range(chunk.start, chunk.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
