"""Before the service says it is ready it searches the index once (`SearchService.warm_up`), so
that the first user's search does not pay for the first calls; a warm-up that fails does not
keep the service from starting."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from app.auth import Authenticator
from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.filters.selectors import chunks
from app.state import AppState, close_services, load_services
from app.store.base import Hit, Query, Store
from app.store.errors import StoreError
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR
from app.store.open import open_store


class Watched:
    """The real store; its searches recorded with whether the service was ready then."""

    def __init__(self, store: Store, state: AppState, fail: bool = False) -> None:
        self._store = store
        self._state = state
        self._fail = fail
        self.searched: list[tuple[list[Query], bool]] = []

    def query_batch(self, queries: Sequence[Query]) -> list[list[Hit]]:
        self.searched.append((list(queries), self._state.services is not None))
        if self._fail:
            raise StoreError("the engine is away")
        return self._store.query_batch(queries)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.fixture
def state(tmp_path: Path) -> AppState:
    return AppState(Settings(data_dir=tmp_path / "data"), Authenticator("s" * 32, {}))


def test_the_index_is_searched_once_before_the_service_is_ready(state: AppState) -> None:
    store = Watched(open_store(state.settings), state)
    load_services(state, store, HashingEncoder())
    try:
        assert state.services is not None and state.error is None
        [(queries, ready)] = store.searched
        assert not ready
        assert [q.using for q in queries] == [DENSE_VECTOR, SPARSE_VECTOR]
        assert all(q.filter == chunks() for q in queries)  # no user's filter: nobody's answer
    finally:
        close_services(state)


def test_a_failed_warm_up_leaves_the_service_starting(state: AppState) -> None:
    store = Watched(open_store(state.settings), state, fail=True)
    load_services(state, store, HashingEncoder())
    try:
        assert state.services is not None and state.error is None
        assert state.ready.is_set()
        assert len(store.searched) == 1
    finally:
        close_services(state)
