"""Payload indexes: created once, never silently replaced."""

from pathlib import Path

import pytest
import qdrant_edge as qe

from app.store.edge import EdgeStore, _config
from app.store.errors import IndexConflict
from app.store.fields import PAYLOAD_INDEXES
from app.store.index_format import IndexSettings, record_settings
from app.store.layout import IndexLayout


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
