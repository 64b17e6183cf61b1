"""Payload indexes: created once, never silently replaced."""

from pathlib import Path

import pytest
import qdrant_edge as qe
from qdrant_client.http import models

from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.filters import selectors
from app.index_settings import IndexSettings
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.store import fields
from app.store.edge import EdgeStore
from app.store.errors import IndexConflict
from app.store.fields import PAYLOAD_INDEXES, PINNED_INDEXES
from app.store.index_format import record_settings
from app.store.layout import IndexLayout
from app.store.shard import EDGE_TYPES as _EDGE_TYPES
from app.store.shard import edge_config as _config
from app.store.shard import placement as _placement
from tests.helpers import doc


def test_indexes_are_created_once(tmp_path: Path) -> None:
    first = EdgeStore(tmp_path, "c")
    assert sorted(first.created_indexes) == sorted(PAYLOAD_INDEXES)
    first.close()
    second = EdgeStore(tmp_path, "c")
    assert second.created_indexes == []
    second.close()


def test_an_index_of_another_type_is_reported_not_replaced(tmp_path: Path) -> None:
    layout = IndexLayout.of(tmp_path, "c")
    shard = qe.EdgeShard.create(str(layout.current()), _config())
    shard.update(qe.UpdateOperation.create_field_index("tags", qe.PayloadSchemaType.Integer))
    shard.flush()
    shard.close()
    record_settings(layout, IndexSettings.current())
    with pytest.raises(IndexConflict, match="'tags'"):
        EdgeStore(tmp_path, "c")
    reopened = qe.EdgeShard.load(str(layout.current()))
    assert reopened.info().payload_schema["tags"].data_type == qe.PayloadSchemaType.Integer
    reopened.close()


def _placements(store: EdgeStore) -> dict[str, object]:
    return {field: _placement(info) for field, info in store._shard.info().payload_schema.items()}


def _wanted() -> dict[str, object]:
    return {
        field: qe.Memory.Pinned if field in PINNED_INDEXES else qe.Memory.Cached
        for field in PAYLOAD_INDEXES
    }


def test_only_the_access_rule_index_is_kept_in_memory(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path, "c")
    try:
        assert _placements(store) == _wanted()
        assert _placements(store)[fields.READERS] == qe.Memory.Pinned
    finally:
        store.close()


def test_indexes_made_all_in_memory_are_placed_again_by_an_optimize(tmp_path: Path) -> None:
    """An index of an earlier version keeps working as it is until the next optimize (a
    rebuild's copy, or offline), which moves it, with the same answers."""
    layout = IndexLayout.of(tmp_path, "c")
    shard = qe.EdgeShard.create(str(layout.current()), _config())
    for field, kind in PAYLOAD_INDEXES.items():
        shard.update(qe.UpdateOperation.create_field_index(field, _EDGE_TYPES[kind]))
    shard.flush()
    shard.close()
    record_settings(layout, IndexSettings.current())
    store = EdgeStore(tmp_path, "c")
    try:
        assert all(place == qe.Memory.Pinned for place in _placements(store).values())
        indexer = Indexer(store, HashingEncoder(), Bm25Encoder())
        batch = [doc(str(i), f"lantern {i}", tags=["red" if i % 3 else "blue"]) for i in range(30)]
        indexer.index(indexer.accept(validate_batch(batch)))
        red = models.Filter(must=[selectors.FIRST_CHUNK, _tag("red")])
        before = store.count(red)
        store.optimize()
        assert _placements(store) == _wanted()
        assert store.count(red) == before == 20
    finally:
        store.close()


def _tag(value: str) -> models.FieldCondition:
    return models.FieldCondition(key=fields.TAGS, match=models.MatchValue(value=value))
