"""The in-memory facet index answers exactly what the engine answers: two embedded stores take
the same random writes, one counting facets in memory and one asking the engine, and every
facet and count (of documents, and of chunks from each document's chunk total) under random
users and filters (built by app.filters) must agree after every write and after a restart (the
index reloaded from its snapshot). So must every search, its filter narrowed by the facet index
in the one (`app.store.narrowing`, here whatever the filter) and not in the other."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from qdrant_client.http import models

from app.auth import Principal
from app.filters.conditions import FACET_KEYS, folder_tree_filter, search_filter
from app.filters.selectors import (
    FIRST_CHUNK,
    IS_CHUNK,
    chunks,
    chunks_of,
    documents,
    of_document,
    readable_by,
)
from app.filters.spec import FilterSpec
from app.store import fields, narrowing
from app.store.base import Hit, Query
from app.store.doc_facets import chunks_kept
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR

USERS = ("alice", "bob", "carol")
GROUPS = ("eng", "ops")
TAGS = ("red", "blue", "green")
FOLDERS = ("/A", "/A/x", "/B")
DATES = (100, 200, 300)
KEYS = tuple(f"note:{n}" for n in range(8))


def point(key: str, index: int, doc: dict[str, Any]) -> models.PointStruct:
    folder = doc["folder"]
    payload = {
        fields.KIND: doc.get("kind", fields.KIND_CHUNK),
        fields.CHUNK_INDEX: index,
        fields.TOTAL_CHUNKS: doc.get("chunks", 1),
        fields.DOC_KEY: key,
        fields.DOC_TYPE: doc["doc_type"],
        fields.DOC_ID: key.split(":")[1],
        fields.OWNER: doc["owner"],
        fields.READERS: [f"user:{doc['owner']}", *doc["acl"]],
        fields.MODIFIED_AT: doc["modified_at"],
        fields.FOLDERS: ["/", *(f for f in FOLDERS if folder.startswith(f))],
        fields.TOP_FOLDER: folder.split("/x")[0],
        fields.DIRECTORIES: ["/", folder],
        fields.TAGS: doc["tags"],
        fields.CATEGORY: doc["category"],
    }
    if payload[fields.KIND] != fields.KIND_CHUNK:
        del payload[fields.READERS]  # as the service writes them: only a chunk has readers
    n = int(key.split(":")[1]) * 8 + index
    return models.PointStruct(
        id=point_id(key, index),
        vector={
            DENSE_VECTOR: [1.0] + [0.0] * 383,
            SPARSE_VECTOR: models.SparseVector(indices=[n], values=[1.0]),
        },
        payload=payload,
    )


documents_drawn = st.fixed_dictionaries(
    {
        "doc_type": st.sampled_from(("note", "file")),
        "owner": st.sampled_from(USERS),
        "acl": st.lists(st.sampled_from(("user:bob", "group:eng", "group:ops")), unique=True),
        "modified_at": st.sampled_from(DATES),
        "folder": st.sampled_from(FOLDERS),
        "tags": st.lists(st.sampled_from(TAGS), max_size=3),  # duplicates count once
        "category": st.sampled_from(("Work", "Home")),
        "kind": st.sampled_from((fields.KIND_CHUNK, fields.KIND_CHUNK, fields.KIND_PENDING)),
        "chunks": st.integers(1, 3),
    }
)
writes = st.one_of(
    st.tuples(st.just("upsert"), st.sampled_from(KEYS), documents_drawn),
    st.tuples(st.just("delete"), st.sampled_from(KEYS), st.none()),
    st.tuples(st.just("retag"), st.sampled_from(KEYS), st.sampled_from(TAGS)),
    st.tuples(st.just("share"), st.sampled_from(USERS), st.sampled_from(GROUPS)),
    st.tuples(st.just("restart"), st.none(), st.none()),
)
specs = st.builds(
    FilterSpec,
    doc_types=st.lists(st.sampled_from(("note", "file", "deck")), max_size=2).map(tuple),
    modified_after=st.sampled_from((None, *DATES)),
    path_prefixes=st.lists(st.sampled_from(FOLDERS), max_size=2).map(tuple),
    tags=st.lists(st.sampled_from(TAGS), max_size=2).map(tuple),
    tags_all=st.lists(st.sampled_from(TAGS), max_size=2).map(tuple),
    categories=st.lists(st.sampled_from(("Work", "Home")), max_size=1).map(tuple),
    owners=st.lists(st.sampled_from(USERS), max_size=2).map(tuple),
)
principals = st.builds(
    Principal,
    user=st.sampled_from((*USERS, "dave")),
    groups=st.lists(st.sampled_from(GROUPS), unique=True).map(tuple),
)


def point_id(key: str, index: int) -> str:
    return f"00000000-0000-0000-0000-{int(key.split(':')[1]) * 8 + index:012d}"


POINT_IDS = [point_id(key, index) for key in KEYS for index in range(4)]  # some never written
RECALLED = ((fields.DOC_TYPE, fields.DOC_ID, fields.MODIFIED_AT), (fields.DOC_KEY,))


def by_id(hits: list[Hit]) -> dict[str, dict[str, Any]]:
    return {hit.id: hit.payload for hit in hits}


def searches(selector: models.Filter) -> list[Query]:
    """Dense, sparse and by date, each deep enough for every point it keeps."""
    every_term = models.SparseVector(indices=list(range(64)), values=[1.0] * 64)
    by_date = models.OrderByQuery(order_by=models.OrderBy(key=fields.MODIFIED_AT))
    return [
        Query(models.NearestQuery(nearest=[1.0] + [0.0] * 383), 100, DENSE_VECTOR, selector),
        Query(models.NearestQuery(nearest=every_term), 100, SPARSE_VECTOR, selector),
        Query(by_date, 100, filter=selector),
    ]


def answered(hits: list[Hit]) -> set[tuple[str, float]]:
    return {(hit.id, round(hit.score, 4)) for hit in hits}


class Pair:
    """The same data twice: facets from memory (`indexed`) and from the engine (`engine`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.indexed, self.engine = self._open()

    def _open(self) -> tuple[EdgeStore, EdgeStore]:
        indexed = EdgeStore(self.root / "indexed", "c")
        engine = EdgeStore(self.root / "engine", "c", facet_index=False)
        assert indexed.wait_for_facet_index(timeout=60)
        assert not engine.wait_for_facet_index()
        return indexed, engine

    def restart(self) -> None:
        self.close()
        self.indexed, self.engine = self._open()

    def close(self) -> None:
        self.indexed.close()
        self.engine.close()

    def apply(self, write: tuple[str, Any, Any]) -> None:
        kind, target, value = write
        if kind == "restart":
            self.restart()
            return
        for store in (self.indexed, self.engine):
            if kind == "upsert":
                store.delete(chunks_of(target))
                store.upsert([point(target, i, value) for i in range(value["chunks"])])
            elif kind == "delete":
                store.delete(models.Filter(must=[of_document(target)]))
            elif kind == "retag":
                store.set_payload({fields.TAGS: [value]}, models.Filter(must=[of_document(target)]))
            else:
                store.set_payload(
                    {fields.READERS: [f"user:{target}", f"group:{value}"]},
                    models.Filter(must=[readable_by([f"user:{target}"])]),
                )

    def assert_agree(self, principal: Principal, spec: FilterSpec, excluded: list[str]) -> None:
        visible = search_filter(principal, spec).excluding(excluded)
        selectors = [visible.selector(first_chunk=True), documents()]
        selectors += [visible.selector(), chunks()]  # chunks: each document's chunk total
        selectors.append(folder_tree_filter(principal, spec, "/"))
        for selector in selectors:
            assert self.indexed.count(selector) == self.engine.count(selector), selector
        for facet, key in FACET_KEYS.items():
            selector = visible.selector(first_chunk=True, without=facet)
            for limit in (1, 100):
                answer = self.indexed.facet(key, selector, limit)
                assert answer == self.engine.facet(key, selector, limit), (facet, selector)
        for key in (*FACET_KEYS.values(), fields.READERS):  # every document, every user
            assert self.indexed.facet(key, documents(), 100) == self.engine.facet(
                key, documents(), 100
            )
        tree = folder_tree_filter(principal, spec, "/")
        assert self.indexed.facet(fields.DIRECTORIES, tree, 100) == self.engine.facet(
            fields.DIRECTORIES, tree, 100
        )
        for selector in (visible.selector(), visible.selector(first_chunk=True)):
            for query in searches(selector):
                indexed = answered(self.indexed.query(query))
                assert indexed == answered(self.engine.query(query)), (query, selector)
        for keys in RECALLED:  # candidates' keys: first chunks' from memory
            assert by_id(self.indexed.retrieve(POINT_IDS, keys)) == by_id(
                self.engine.retrieve(POINT_IDS, keys)
            )


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    stores = Pair(tmp_path)
    yield stores
    stores.close()


@settings(max_examples=6, deadline=None)
@given(
    initial=st.lists(st.tuples(st.sampled_from(KEYS), documents_drawn), min_size=3, max_size=8),
    steps=st.lists(
        st.tuples(writes, principals, specs, st.lists(st.sampled_from(KEYS), max_size=2)),
        min_size=1,
        max_size=6,
    ),
)
def test_memory_facets_equal_the_engine_after_every_write(
    tmp_path_factory: pytest.TempPathFactory,
    initial: list[tuple[str, dict[str, Any]]],
    steps: list[tuple[tuple[str, Any, Any], Principal, FilterSpec, list[str]]],
) -> None:
    stores = Pair(tmp_path_factory.mktemp("facets"))
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(narrowing, "NARROWER", 0)  # every filter the facet index evaluates
            for key, doc in initial:
                stores.apply(("upsert", key, doc))
            for write, principal, spec, excluded in steps:
                stores.apply(write)
                stores.assert_agree(principal, spec, excluded)
                stores.assert_agree(principal, FilterSpec(), [])
    finally:
        stores.close()


def test_a_filter_it_cannot_evaluate_is_answered_by_the_engine(pair: Pair) -> None:
    doc = {
        "doc_type": "note",
        "owner": "alice",
        "acl": [],
        "modified_at": 100,
        "folder": "/A",
        "tags": ["red"],
        "category": "Work",
    }
    for store in (pair.indexed, pair.engine):
        store.upsert([point("note:1", 0, doc), point("note:2", 0, doc | {"owner": "bob"})])
    no_title = models.IsEmptyCondition(is_empty=models.PayloadField(key="title"))
    by_id = models.FieldCondition(key=fields.DOC_ID, match=models.MatchValue(value="2"))
    odd = models.Filter(must=[IS_CHUNK, FIRST_CHUNK, no_title])
    unindexed = models.Filter(must=[IS_CHUNK, FIRST_CHUNK, by_id])
    assert pair.indexed.facet(fields.OWNER, odd, 10) == {"alice": 1, "bob": 1}
    assert pair.indexed.facet(fields.OWNER, unindexed, 10) == {"bob": 1}
    assert pair.indexed.count(unindexed) == 1
    # Every chunk, not only documents: not what the index holds, the engine counts.
    assert pair.indexed.count(models.Filter(must=[readable_by(["user:alice"])])) == 1


def test_keeps_fewer_answers_as_the_count_does_documents_or_chunks(pair: Pair) -> None:
    """Whether a dense search is scored exactly (`EdgeStore`) follows the points a filter keeps:
    documents for one that pins first chunks, else each document's chunk total."""
    doc = {"doc_type": "note", "owner": "alice", "acl": [], "modified_at": 100, "chunks": 3}
    doc |= {"folder": "/A", "tags": ["red"], "category": "Work"}
    pair.indexed.upsert(
        [point(f"note:{n}", index, doc) for n in (1, 2) for index in range(3)]
        + [point("note:3", 0, doc | {"chunks": 1, "tags": ["blue"]})]
    )
    pair.indexed.wait_for_facet_index()
    memory = pair.indexed._facets
    for tags, kept_documents, kept_chunks in ((("red",), 2, 6), ((), 3, 7), (("green",), 0, 0)):
        visible = search_filter(Principal("alice"), FilterSpec(tags=tags))
        assert memory.count(visible.selector()) == kept_chunks
        for limit in range(9):
            assert memory.keeps_fewer(visible.selector(), limit) is (kept_chunks < limit)
            first = visible.selector(first_chunk=True)
            assert memory.keeps_fewer(first, limit) is (kept_documents < limit)
    unguarded = models.Filter(must=[FIRST_CHUNK])  # a placeholder could match: the engine
    assert memory.keeps_fewer(unguarded, 5) is None


@pytest.mark.parametrize("share", [0.0, 0.001, 0.1, 0.2, 0.5, 1.0])
def test_chunks_kept_sums_the_rows_a_mask_keeps_whatever_their_share(share: float) -> None:
    """Narrow masks are gathered and wide ones summed in one pass: both give the plain sum."""
    rng = np.random.default_rng(7)
    chunks = rng.integers(0, 40, 20_000).astype(np.int32)
    mask = rng.random(20_000) < share
    expected = sum(int(c) for c, kept in zip(chunks, mask, strict=True) if kept)
    assert chunks_kept(chunks, mask) == expected


def test_the_search_filter_is_answered_from_memory(pair: Pair) -> None:
    """The search filter keeps to chunks through the access rule alone (no `kind`): its
    counts and facets must still come from memory, not from a scan by the engine."""
    doc = {"doc_type": "note", "owner": "alice", "acl": ["group:eng"], "modified_at": 100}
    doc |= {"folder": "/A", "tags": ["red"], "category": "Work"}
    pair.indexed.upsert([point("note:1", 0, doc), point("note:2", 0, doc | {"owner": "bob"})])
    pair.indexed.wait_for_facet_index()
    visible = search_filter(Principal("alice"), FilterSpec(tags=("red",)))
    memory = pair.indexed._facets
    assert memory.count(visible.selector(first_chunk=True)) == 1
    assert memory.count(visible.selector()) == 1  # chunks: the document's chunk total
    assert memory.facet(fields.TAGS, visible.selector(first_chunk=True), 10) == {"red": 1}
    everyone = models.Filter(must=[FIRST_CHUNK, readable_by(["user:alice", "user:bob"])])
    assert memory.count(everyone) == 2
    unguarded = models.Filter(must=[FIRST_CHUNK])  # a placeholder could match: the engine
    assert memory.count(unguarded) is None


def test_first_chunks_keys_come_from_memory_after_writes_and_a_restart(pair: Pair) -> None:
    """The keys a search groups and ranks candidates by (doc_type, doc_id, date) are read from
    the facet index for a document's first chunk, and from the engine for its other chunks and
    for a point whose key is not spelled from its doc_type (as the service never writes)."""
    doc = {"doc_type": "note", "owner": "alice", "acl": [], "modified_at": 100, "chunks": 3}
    doc |= {"folder": "/A", "tags": ["red"], "category": "Work"}
    odd = doc | {"doc_type": "file", "chunks": 1}
    points = [point("note:1", index, doc) for index in range(3)] + [point("note:2", 0, odd)]
    pair.indexed.upsert(points)
    keys = (fields.DOC_TYPE, fields.DOC_ID, fields.MODIFIED_AT)
    for _ in range(2):
        assert pair.indexed.wait_for_facet_index()
        memory = pair.indexed._facets.payloads(POINT_IDS, keys)
        assert memory == {
            point_id("note:1", 0): {"doc_type": "note", "doc_id": "1", "modified_at": 100}
        }
        assert by_id(pair.indexed.retrieve(POINT_IDS, keys)) == {
            p.id: {key: p.payload[key] for key in keys} for p in points if p.payload
        }
        pair.restart()  # the index restored from its snapshot, then numbered
