"""`granularity=document` reads its candidates' keys from the facet index where it can: the
same searches on one embedded store holding documents of one and of many chunks, once as it
reads them and once with every key read from the engine (as before), must give the same pages:
the same documents in the same order with the same best chunk, the same scores, totals and
strong matches, under filters, date sorts and at every offset."""

from collections.abc import Iterator, Sequence
from typing import Any, cast

import pytest

from app.auth import Principal
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.filters.spec import FilterSpec
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.search.algorithms import Algorithm, QueryEncoder
from app.search.service import Granularity, SearchOutcome, SearchQuery, SearchService, SortOrder
from app.store import fields
from app.store.base import Hit, Store
from app.store.edge import EdgeStore
from tests.helpers import doc

WORDS = [
    "lantern",
    "harbour",
    "quartz",
    "meadow",
    "signal",
    "copper",
    "orbit",
    "willow",
    "ember",
    "prism",
]
QUERIES = ("lantern quartz", "copper orbit signal", "meadow", "willow ember prism harbour")


def corpus() -> list[dict[str, Any]]:
    """60 documents: most of one chunk, every fifth of several (chunks of 12 words)."""
    documents = []
    for n in range(60):
        length = 40 if n % 5 == 0 else 8
        text = " ".join(WORDS[(n * 7 + i * (n % 3 + 1)) % len(WORDS)] for i in range(length))
        documents.append(
            doc(
                str(n),
                f"{text}.",
                owner=("alice", "bob")[n % 2],
                acl=["group:eng"] if n % 3 == 0 else [],
                tags=[("red", "blue")[n % 2]],
                modified_at=f"2026-0{n % 9 + 1}-01T00:00:00Z",
            )
        )
    return documents


class EngineRead:
    """The store, but every payload read by the engine (no key from the facet index)."""

    def __init__(self, store: EdgeStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def retrieve(self, ids: Sequence[str], payload_keys: Sequence[str] | None = None) -> list[Hit]:
        if payload_keys is None:
            return self.store.retrieve(ids)
        return [
            Hit(hit.id, hit.score, {k: hit.payload[k] for k in payload_keys if k in hit.payload})
            for hit in self.store.retrieve(ids)
        ]


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SearchService, ...]]:
    store = EdgeStore(tmp_path_factory.mktemp("granularity"), "g")
    try:
        indexer = Indexer(store, HashingEncoder(), Bm25Encoder(), chunk_words=12)
        indexer.index(indexer.accept(validate_batch(corpus())))
        assert store.wait_for_facet_index(timeout=60)
        encoder = QueryEncoder(HashingEncoder(), Bm25Encoder())
        engine_read = cast(Store, EngineRead(store))
        yield tuple(SearchService(one, encoder, rrf_k=60) for one in (store, engine_read))
    finally:
        store.close()


def shown(outcome: SearchOutcome) -> tuple[Any, ...]:
    hits = [
        (hit.id, hit.score, {k: v for k, v in hit.payload.items() if k != fields.REVISION})
        for hit in outcome.hits
    ]
    relevance = {hit.id: outcome.relevance.get(hit.id) for hit in outcome.hits}
    return hits, relevance, outcome.total_found, outcome.strong_found, outcome.strong


def test_the_corpus_has_documents_of_several_chunks(services: tuple[SearchService, ...]) -> None:
    outcome = services[0].search(
        Principal("alice", ("eng",)), SearchQuery(text="lantern", limit=100)
    )
    chunks = [hit.payload[fields.TOTAL_CHUNKS] for hit in outcome.hits]
    assert max(chunks) > 2 and chunks.count(1) > 10


@pytest.mark.parametrize("algorithm", list(Algorithm))
@pytest.mark.parametrize(
    "spec", [FilterSpec(), FilterSpec(tags=("red",)), FilterSpec(modified_after=1_775_000_000)]
)
def test_document_pages_equal_the_engine_read_ones(
    services: tuple[SearchService, ...], algorithm: Algorithm, spec: FilterSpec
) -> None:
    memory, engine = services
    alice = Principal("alice", ("eng",))
    documents = 0
    for text in QUERIES:
        for limit, offset in ((10, 0), (5, 5), (7, 14), (50, 0)):
            for sort in (None, SortOrder.NEWEST):
                query = SearchQuery(
                    text=text,
                    algorithm=algorithm,
                    granularity=Granularity.DOCUMENT,
                    limit=limit,
                    offset=offset,
                    spec=spec,
                    sort=sort,
                )
                answer = shown(memory.search(alice, query))
                assert answer == shown(engine.search(alice, query)), query
                refs = [(h[2][fields.DOC_TYPE], h[2][fields.DOC_ID]) for h in answer[0]]
                assert len(set(refs)) == len(refs)  # one result a document
                documents += len(refs)
    assert documents > 0
