"""A search whose filter keeps far fewer documents than any one of its conditions is handed to
the engine as those documents (`app.store.narrowing`): the same answers, the access rule still
checked by the engine, and asked again as it came when a write began meanwhile."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from qdrant_client.http import models

from app.auth import Principal
from app.filters.conditions import search_filter
from app.filters.selectors import of_document
from app.filters.spec import FilterSpec
from app.store import fields, narrowing
from app.store.base import Hit, Query
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR

# 2 documents tagged red and blue among 50 red and 50 blue ones: 25x fewer than either tag.
BOTH = ("note:0", "note:1")


def point(n: int, tags: list[str], owner: str, chunk: int = 0) -> models.PointStruct:
    key = f"note:{n}"
    return models.PointStruct(
        id=f"00000000-0000-0000-0000-{n * 4 + chunk:012d}",
        vector={
            DENSE_VECTOR: [1.0, n / 100] + [0.0] * 382,
            SPARSE_VECTOR: models.SparseVector(indices=[n * 4 + chunk], values=[1.0]),
        },
        payload={
            fields.KIND: fields.KIND_CHUNK,
            fields.CHUNK_INDEX: chunk,
            fields.TOTAL_CHUNKS: 2,
            fields.DOC_KEY: key,
            fields.DOC_TYPE: "note",
            fields.DOC_ID: str(n),
            fields.OWNER: owner,
            fields.READERS: [f"user:{owner}"],
            fields.MODIFIED_AT: 100,
            fields.TAGS: tags,
        },
    )


def documents() -> list[models.PointStruct]:
    tagged = [(n, ["red", "blue"]) for n in range(2)]
    tagged += [(n, ["red"]) for n in range(2, 50)] + [(n, ["blue"]) for n in range(50, 98)]
    return [
        point(n, tags, "alice" if n % 2 == 0 else "bob", chunk)
        for n, tags in tagged
        for chunk in range(2)
    ]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EdgeStore]:
    opened = EdgeStore(tmp_path, "c")
    opened.upsert(documents())
    assert opened.wait_for_facet_index(timeout=60)
    yield opened
    opened.close()


def both_tags(user: str) -> models.Filter:
    spec = FilterSpec(tags_all=("red", "blue"))
    return search_filter(Principal(user), spec).selector()


def searches(selector: models.Filter) -> list[Query]:
    sparse = models.SparseVector(indices=list(range(400)), values=[1.0] * 400)
    return [
        Query(models.NearestQuery(nearest=[1.0] + [0.0] * 383), 50, DENSE_VECTOR, selector),
        Query(models.NearestQuery(nearest=sparse), 50, SPARSE_VECTOR, selector),
    ]


def answered(hits: list[Hit]) -> list[tuple[str, float]]:
    return sorted((hit.id, round(hit.score, 4)) for hit in hits)


def doc_keys(hits: list[Hit]) -> set[Any]:
    return {hit.payload[fields.DOC_KEY] for hit in hits}


def test_a_narrow_combination_is_asked_as_its_documents_with_the_same_answers(
    store: EdgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    selector = both_tags("alice")
    kept = store._facets.documents_kept(selector, narrowing.MAX_DOCUMENTS, narrowing.NARROWER)
    assert kept == ["note:0"]
    assert store._engine_filter(selector, narrow=True)[1]
    narrowed = [store.query(q) for q in searches(selector)]
    assert [doc_keys(hits) for hits in narrowed] == [{"note:0"}, {"note:0"}]
    assert all(len(hits) == 2 for hits in narrowed)  # both chunks of the document
    monkeypatch.setattr(narrowing, "NARROWER", 10**9)
    store._filters.invalidate()
    assert not store._engine_filter(selector, narrow=True)[1]
    assert [answered(store.query(q)) for q in searches(selector)] == [
        answered(hits) for hits in narrowed
    ]


def test_the_narrowed_filter_keeps_the_access_rule_and_what_tells_chunks_apart() -> None:
    selector = search_filter(Principal("alice", ("eng",)), FilterSpec(tags_all=("a", "b")))
    first_chunks = selector.selector(first_chunk=True)
    asked = narrowing.narrowed(first_chunks, ["note:3"])
    assert isinstance(asked.must, list)
    conditions = [c for c in asked.must if isinstance(c, models.FieldCondition)]
    assert conditions[0] == models.FieldCondition(
        key=fields.DOC_KEY, match=models.MatchAny(any=["note:3"])
    )
    assert {c.key for c in conditions[1:]} == {fields.READERS, fields.CHUNK_INDEX}
    assert len(asked.must) == len(conditions)  # nothing nested in this filter to keep


def test_a_filter_not_far_narrower_than_its_conditions_is_asked_as_it_came(
    store: EdgeStore,
) -> None:
    one_tag = search_filter(Principal("alice"), FilterSpec(tags=("red",))).selector()
    assert not store._engine_filter(one_tag, narrow=True)[1]
    everyone = search_filter(Principal("alice"), FilterSpec()).selector()
    assert store._facets.documents_kept(everyone, 10, 1) is None  # over the limit


def test_the_engine_still_checks_the_access_rule(
    store: EdgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A facet index wrong about who may read (here: naming every document) does not let a
    user see another's document: the engine checks the access rule of the narrowed filter."""
    every_key = [f"note:{n}" for n in range(98)]
    monkeypatch.setattr(store._facets, "documents_kept", lambda *args: every_key)
    for query in searches(both_tags("bob")):
        hits = store.query(query)
        assert hits and all(hit.payload[fields.OWNER] == "bob" for hit in hits)


class WriteBeginsDuringTheSearch:
    """The shard, but a write begins while the first batch of queries is in the engine."""

    def __init__(self, store: EdgeStore) -> None:
        self._store, self._shard = store, store._shard
        self.asked: list[Any] = []

    def query_batch(self, request: Any) -> Any:
        self.asked.append(request)
        if len(self.asked) == 1:
            self._store._writes_begun += 1
        return self._shard.query_batch(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shard, name)


def test_a_write_begun_during_a_narrowed_search_has_it_asked_again_as_it_came(
    store: EdgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    shard = WriteBeginsDuringTheSearch(store)
    monkeypatch.setattr(store, "_shard", shard)
    hits = store.query_batch(searches(both_tags("alice")))
    assert len(shard.asked) == 2
    assert [doc_keys(h) for h in hits] == [{"note:0"}, {"note:0"}]
    store._writes_done += 1  # the write is done: narrowed again, asked once
    store.query_batch(searches(both_tags("alice")))
    assert len(shard.asked) == 3


def test_no_search_is_narrowed_while_a_write_is_half_done(
    store: EdgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the shard taking a write and the facet index reading it back, the index may
    name documents the shard no longer holds as it did."""
    narrowed: list[models.Filter] = []
    real = store._narrowed

    def counted(selector: models.Filter) -> Any:
        narrowed.append(selector)
        return real(selector)

    monkeypatch.setattr(store, "_narrowed", counted)
    store._writes_begun += 1
    store.query_batch(searches(both_tags("alice")))
    assert narrowed == []
    store._writes_done += 1
    store.query_batch(searches(both_tags("alice")))
    assert len(narrowed) == 1  # one filter, both branches: kept until the next write


def test_a_write_changes_the_next_narrowed_search(store: EdgeStore) -> None:
    """The narrowed filter is kept for the searches after it, until the next write."""
    query = searches(both_tags("alice"))[0]
    assert doc_keys(store.query(query)) == {"note:0"}
    assert doc_keys(store.query(query)) == {"note:0"}
    store.upsert([point(2, ["red", "blue"], "alice", chunk) for chunk in range(2)])
    assert doc_keys(store.query(query)) == {"note:0", "note:2"}
    store.delete(models.Filter(must=[of_document("note:0")]))
    assert doc_keys(store.query(query)) == {"note:2"}
