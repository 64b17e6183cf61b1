"""DocumentReader on the real embedded engine: the text around a chunk is the document's own
text (overlaps counted once, widened over as many chunks as it takes), only for a reader."""

import random
import string

import pytest
from fastapi.testclient import TestClient

from app.auth import Principal
from app.search.documents import DocumentReader
from tests.helpers import doc, index

TEXT = " ".join(f"Sentence number {j} of the long note says something new." for j in range(400))
# One long sentence of one-letter words: chunks without overlap and shorter than the reader's
# first guess, so a wide context takes more than one fetch.
_letters = random.Random(7)
TERSE = " ".join(_letters.choice(string.ascii_lowercase) for _ in range(3000)) + "."
ALICE = Principal(user="alice")


def reader(client: TestClient) -> DocumentReader:
    services = client.app.state.astrolabe.require_services()  # type: ignore[attr-defined]
    return DocumentReader(services.store)


@pytest.mark.parametrize(
    ("text", "chars"),
    [(TEXT, 0), (TEXT, 40), (TEXT, 700), (TEXT, 5000), (TERSE, 2000)],
    ids=["none", "short", "a chunk", "many chunks", "short chunks"],
)
def test_context_is_the_text_around_every_chunk(client: TestClient, text: str, chars: int) -> None:
    chunks = index(client, doc("long", text))["chunks"]
    assert chunks >= 5, "too few chunks to test overlaps and widening"
    documents = reader(client)
    for i in range(chunks):
        context = documents.context(ALICE, ("note", "long"), i, chars)
        assert context is not None
        assert (context.chunk_index, context.total_chunks) == (i, chunks)
        start = text.index(context.chunk_text)
        before = text[:start].rstrip()
        after = text[start + len(context.chunk_text) :].lstrip()
        assert before.endswith(context.before_context)
        assert after.startswith(context.after_context)
        assert len(context.before_context) <= chars >= len(context.after_context)
        # Cut at word boundaries, and only as short as the limit forces.
        assert len(context.before_context) > min(chars, len(before)) - 20
        assert len(context.after_context) > min(chars, len(after)) - 20
        assert context.has_more_before == (len(before) > len(context.before_context))
        assert context.has_more_after == (len(after) > len(context.after_context))


def test_no_context_for_someone_who_may_not_read_it_or_a_missing_chunk(
    client: TestClient,
) -> None:
    index(client, doc("long", TEXT, acl=["group:eng"]))
    documents = reader(client)
    assert documents.context(Principal(user="bob"), ("note", "long"), 0, 100) is None
    assert documents.context(Principal(user="bob", groups=("eng",)), ("note", "long"), 0, 100)
    assert documents.context(ALICE, ("note", "long"), 99, 100) is None
    assert documents.context(ALICE, ("note", "other"), 0, 100) is None


def test_visibility_and_counts_follow_the_access_rule(client: TestClient) -> None:
    index(client, doc("mine", "a"), doc("shared", "b", owner="bob", acl=["user:alice"]))
    index(client, doc("bobs", "c", owner="bob"), user="bob")
    documents = reader(client)
    assert documents.is_visible(ALICE, ("note", "shared"))
    assert not documents.is_visible(ALICE, ("note", "bobs"))
    assert not documents.is_visible(ALICE, ("file", "mine"))
    assert documents.count_visible(ALICE) == 2
    assert documents.count_visible(Principal(user="bob")) == 2
