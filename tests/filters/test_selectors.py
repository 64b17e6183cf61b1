"""The named selectors and the search filter, counted on a real Qdrant Edge shard holding
indexed documents, a pending placeholder and a failed one."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_client.http import models

from app.auth import Principal
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.filters import selectors
from app.filters.conditions import Facet, SearchFilter, search_filter
from app.filters.spec import FilterSpec
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer, Job
from app.store import fields
from app.store.edge import EdgeStore
from tests.helpers import doc

LONG = " ".join(f"Sentence {i} talks about the lantern." for i in range(120))


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EdgeStore, Job, Job]]:
    store = EdgeStore(tmp_path_factory.mktemp("selectors"), "t")
    indexer = Indexer(store, HashingEncoder(), Bm25Encoder(), chunk_words=60)
    indexed = [
        doc("long", LONG, tags=["red"]),
        doc("short", "one chunk", tags=["blue"]),
        doc("long", "a file with the same doc_id", doc_type="file", owner="bob"),
    ]
    indexer.index(indexer.accept(validate_batch(indexed)))
    pending, failed = indexer.accept(validate_batch([doc("waiting"), doc("broken")]))
    indexer.fail(failed, "boom")
    try:
        yield store, pending, failed
    finally:
        store.close()


def test_documents_count_each_indexed_document_once(stored: tuple[EdgeStore, Job, Job]) -> None:
    store, _, _ = stored
    assert store.count(selectors.documents()) == 3
    keys = ["note:long", "file:long", "note:waiting", "note:nope"]
    assert store.count(selectors.documents_with_keys(keys)) == 2


def test_chunks_of_one_document_and_from_an_index_on(stored: tuple[EdgeStore, Job, Job]) -> None:
    store, _, _ = stored
    long_chunks = store.count(selectors.chunks_of("note:long"))
    assert long_chunks > 2
    assert store.count(selectors.chunks_of("file:long")) == 1
    assert store.count(selectors.chunks()) == long_chunks + 2
    assert store.count(selectors.chunks_of_from("note:long", 2)) == long_chunks - 2
    assert store.count(selectors.chunks_of("note:waiting")) == 0


def test_placeholders_pending_and_failed(stored: tuple[EdgeStore, Job, Job]) -> None:
    store, pending, failed = stored
    assert store.count(selectors.pending()) == 1
    assert store.count(selectors.failed()) == 1
    assert store.count(selectors.points_of(pending.doc_key)) == 1
    assert store.count(selectors.placeholder_of(pending.doc_key, pending.revision)) == 1
    assert store.count(selectors.placeholder_of(pending.doc_key, pending.revision + 1)) == 0
    assert store.count(selectors.placeholder_of(failed.doc_key, failed.revision)) == 1


def test_the_search_filter_and_its_variants(stored: tuple[EdgeStore, Job, Job]) -> None:
    store, _, _ = stored
    alice = Principal("alice")
    everything = search_filter(alice, FilterSpec())
    long_chunks = store.count(selectors.chunks_of("note:long"))
    assert store.count(everything.selector()) == long_chunks + 1  # bob's file is not hers
    assert store.count(everything.selector(first_chunk=True)) == 2
    assert store.count(everything.excluding(["note:long"]).selector()) == 1
    red = search_filter(alice, FilterSpec(tags=("red",)))
    assert store.count(red.selector(first_chunk=True)) == 1
    assert store.count(red.selector(first_chunk=True, without=Facet.TAGS)) == 2
    assert store.count(red.selector(first_chunk=True, without=Facet.OWNER)) == 1
    assert store.count(search_filter(Principal("bob"), FilterSpec()).selector()) == 1


def test_the_filter_is_built_once_per_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The candidates, the engine-counted total and five facets all reuse one search filter."""
    from app.search import service as service_module
    from app.search.algorithms import QueryEncoder
    from app.search.service import SearchQuery, SearchService

    store = EdgeStore(tmp_path, "t")
    try:
        sparse = Bm25Encoder()
        indexer = Indexer(store, HashingEncoder(), sparse)
        batch = [doc(str(i), f"lantern {i}", tags=["red"]) for i in range(150)]
        indexer.index(indexer.accept(validate_batch(batch)))
        built: list[FilterSpec] = []

        def counting(principal: Principal, spec: FilterSpec) -> SearchFilter:
            built.append(spec)
            return search_filter(principal, spec)

        monkeypatch.setattr(service_module, "search_filter", counting)
        searcher = SearchService(store, QueryEncoder(HashingEncoder(), sparse), rrf_k=60)
        query = SearchQuery(text="lantern", include_facets=True, spec=FilterSpec(tags=("red",)))
        outcome = searcher.search(Principal("alice"), query)
        assert outcome.total_found == 150  # more than the 100 candidates: counted by the engine
        assert outcome.facets is not None and outcome.facets["tags"] == {"red": 150}
        assert len(built) == 1
    finally:
        store.close()


def test_only_chunks_carry_readers(stored: tuple[EdgeStore, Job, Job]) -> None:
    """The search filter keeps to chunks through the access rule alone (no `kind` condition):
    a placeholder with readers would be found by a search."""
    store, _, _ = stored
    others = store.scroll(models.Filter(must_not=[selectors.IS_CHUNK]), 100)
    assert len(others) >= 2  # the pending and the failed placeholder
    assert all(fields.READERS not in hit.payload for hit in others)
    chunks = store.scroll(selectors.chunks(), 100)
    assert chunks and all(fields.READERS in hit.payload for hit in chunks)
