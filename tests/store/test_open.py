"""The one door to the store (app/store/open.py): each use gets the store it needs, the graph is
built only where it is due and only by the engine that builds one, and a restore only goes where
nothing would be overwritten."""

import warnings
from pathlib import Path

import pytest

from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.store.edge import EdgeStore
from app.store.open import (
    RESTORING,
    Use,
    build_graph,
    embedded_index_exists,
    empty_for_restore,
    graph_due,
    open_store,
)
from app.store.server import ServerStore
from tests.helpers import doc

LOCAL_MODE_WARNING = "Payload indexes have no effect in the local Qdrant"


def server_settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, qdrant_url=":memory:")


@pytest.mark.parametrize("use", [Use.IN_PROCESS, Use.COMMAND, Use.AS_IS])
def test_every_use_in_this_process_is_qdrant_edge(tmp_path: Path, use: Use) -> None:
    settings = Settings(data_dir=tmp_path)
    assert not embedded_index_exists(settings)
    store = open_store(settings, use)
    try:
        assert isinstance(store, EdgeStore) and store.backend == "embedded"
        assert store.wait_for_facet_index(timeout=5) is (use is Use.IN_PROCESS)
    finally:
        store.close()
    assert embedded_index_exists(settings)


def test_a_qdrant_url_opens_a_server_store_for_every_use(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", LOCAL_MODE_WARNING, UserWarning)
        store = open_store(server_settings(tmp_path), Use.SERVE)
    try:
        assert isinstance(store, ServerStore) and store.backend == "server"
        assert graph_due(store, threshold=1, written=100) is None  # it indexes by itself
        assert build_graph(store) is False
    finally:
        store.close()


def test_the_graph_is_due_past_the_threshold_and_built_in_process(tmp_path: Path) -> None:
    store = open_store(Settings(data_dir=tmp_path), Use.COMMAND)
    try:
        indexer = Indexer(store, HashingEncoder(), Bm25Encoder())
        indexer.index(indexer.accept(validate_batch([doc(str(n)) for n in range(12)])))
        assert graph_due(store, threshold=100, written=12) is None
        assert graph_due(store, threshold=10, written=12) == 12
        assert build_graph(store) is True  # tests/store/test_hnsw.py: what it builds
    finally:
        store.close()


def test_a_restore_goes_only_where_nothing_would_be_overwritten(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    assert empty_for_restore(settings)  # not there yet
    (tmp_path / "data" / RESTORING / "astrolabe").mkdir(parents=True)
    assert empty_for_restore(settings)  # what a restore cut short left goes first
    assert not (tmp_path / "data" / RESTORING).exists()
    (tmp_path / "data" / "notes.txt").write_text("mine")
    assert not empty_for_restore(settings)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", LOCAL_MODE_WARNING, UserWarning)
        assert empty_for_restore(server_settings(tmp_path))  # a new collection
