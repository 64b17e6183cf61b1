"""The facet index saved beside its shard: a clean close leaves a snapshot that the next open
loads instead of reading every document back, with the same answers; the open takes it away
before any write, so a crash never leaves one behind that the shard has outgrown."""

import shutil
from pathlib import Path
from typing import Protocol

import pytest
from qdrant_client.http import models

from app.auth import Principal
from app.filters.conditions import FACET_KEYS, search_filter
from app.filters.selectors import documents, documents_with_keys, of_document
from app.filters.spec import FilterSpec
from app.store import doc_facets, facet_snapshot
from app.store.edge import EdgeStore
from app.store.layout import IndexLayout
from tests.store.test_doc_facets import point

DOCS = {
    f"note:{n}": {
        "doc_type": ("note", "file")[n % 2],
        "owner": ("alice", "bob", "carol")[n % 3],
        "acl": [["group:eng"], [], ["user:bob"]][n % 3],
        "modified_at": (100, 200, 300)[n % 3],
        "folder": ("/A", "/A/x", "/B")[n % 3],
        "tags": [["red"], ["red", "blue"], []][n % 3],
        "category": ("Work", "Home")[n % 2],
    }
    for n in range(7)
}


def load(store: EdgeStore) -> None:
    for key, doc in DOCS.items():
        store.upsert([point(key, i, doc) for i in range(1 + len(key) % 2)])
    assert store.wait_for_facet_index(timeout=60)  # else a close leaves no snapshot


class Answering(Protocol):
    """The store, or its facet index alone."""

    def count(self, selector: models.Filter) -> object: ...

    def facet(self, key: str, selector: models.Filter, limit: int) -> object: ...


def answers(source: Answering) -> list[object]:
    """Counts (of all documents, by document key, of several users and filters) and facets."""
    found: list[object] = [source.count(documents())]
    found.append(source.count(documents_with_keys(["note:3", "note:5", "none:0"])))
    for principal in (Principal("alice", ("eng",)), Principal("bob")):
        for spec in (FilterSpec(), FilterSpec(tags=("red",)), FilterSpec(path_prefixes=("/A",))):
            visible = search_filter(principal, spec)
            found.append(source.count(visible.selector(first_chunk=True)))
            found += [
                source.facet(key, visible.selector(first_chunk=True, without=facet), 100)
                for facet, key in FACET_KEYS.items()
            ]
    return found


def snapshot_of(store_dir: Path) -> Path:
    return IndexLayout.facet_snapshot(IndexLayout.of(store_dir, "c").current())


def test_a_reopened_store_loads_its_snapshot_and_answers_alike(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path, "c")
    load(store)
    before = answers(store)
    store.close()
    assert snapshot_of(tmp_path).exists()
    reopened = EdgeStore(tmp_path, "c")
    try:
        assert not snapshot_of(tmp_path).exists()  # taken before any write
        assert reopened.wait_for_facet_index(timeout=0)  # no read-back to wait for
        assert answers(reopened) == before
        reopened.set_payload({"tags": ["green"]}, models.Filter(must=[documents()]))
        changed = answers(reopened)
    finally:
        reopened.close()
    assert changed != before
    again = EdgeStore(tmp_path, "c")
    try:
        assert again.wait_for_facet_index(timeout=0)
        assert answers(again) == changed  # the snapshot of the last close, not the first
    finally:
        again.close()


def test_a_restored_index_answers_alike_before_and_after_its_large_maps_are_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(doc_facets, "ROWS_PER_SLICE", 2)  # vocabularies over 2 values are large
    store = EdgeStore(tmp_path, "c")
    load(store)
    expected = answers(store)
    store.close()
    restored = facet_snapshot.take(snapshot_of(tmp_path))
    assert restored is not None
    assert restored._fields["doc_key"].codes is None  # searched in its vocabulary until then
    assert answers(restored) == expected
    restored.number()
    codes = restored._fields["doc_key"].codes
    assert codes is not None and dict(codes.items()) == {f"note:{n}": n for n in range(7)}
    assert answers(restored) == expected


def test_the_masks_kept_come_back_with_the_snapshot_and_grow_with_later_writes(
    tmp_path: Path,
) -> None:
    store = EdgeStore(tmp_path, "c")
    load(store)
    expected = answers(store)
    kept = set(store._facets._masks)
    store.close()
    shutil.copy(snapshot_of(tmp_path), tmp_path / "copy.npz")
    restored = facet_snapshot.take(snapshot_of(tmp_path))
    made_anew = facet_snapshot.take(tmp_path / "copy.npz")
    assert restored is not None and made_anew is not None
    made_anew._masks.clear()
    assert kept and set(restored._masks) == kept
    assert answers(restored) == answers(made_anew) == expected
    written = [point("note:9", 0, DOCS["note:1"]), point("note:2", 0, DOCS["note:0"])]
    payloads = {str(p.id): dict(p.payload or {}) for p in written}
    for facets in (restored, made_anew):
        facets.refresh(list(payloads), payloads)
    made_anew._masks.clear()
    assert answers(restored) == answers(made_anew) != expected


def test_a_crash_leaves_no_snapshot_and_the_documents_are_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(doc_facets, "ROWS_PER_SLICE", 2)  # the id -> row map in several slices
    store = EdgeStore(tmp_path / "live", "c")
    load(store)
    store.close()
    store = EdgeStore(tmp_path / "live", "c")  # took the snapshot
    try:
        store.set_payload({"tags": ["green"]}, models.Filter(must=[documents()]))
        store.delete(models.Filter(must=[of_document("note:1")]))
        expected = answers(store)
        store.flush()
        shutil.copytree(tmp_path / "live", tmp_path / "crashed")  # the disk as a kill leaves it
    finally:
        store.close()
    assert not snapshot_of(tmp_path / "crashed").exists()
    recovered = EdgeStore(tmp_path / "crashed", "c")
    try:
        assert recovered.wait_for_facet_index(timeout=60)
        assert answers(recovered) == expected
    finally:
        recovered.close()


def test_a_store_without_facets_keeps_the_snapshot_only_if_it_writes_nothing(
    tmp_path: Path,
) -> None:
    store = EdgeStore(tmp_path, "c")
    load(store)
    store.close()
    reader = EdgeStore(tmp_path, "c", facet_index=False)
    assert reader.count(documents()) == len(DOCS)
    reader.close()
    assert snapshot_of(tmp_path).exists()
    writer = EdgeStore(tmp_path, "c", facet_index=False)
    writer.delete(models.Filter(must=[documents()]))
    writer.close()
    assert not snapshot_of(tmp_path).exists()


def test_an_unreadable_snapshot_is_ignored(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path, "c")
    load(store)
    expected = answers(store)
    store.close()
    snapshot_of(tmp_path).write_bytes(b"not a snapshot")
    reopened = EdgeStore(tmp_path, "c")
    try:
        assert reopened.wait_for_facet_index(timeout=60)
        assert answers(reopened) == expected
    finally:
        reopened.close()
