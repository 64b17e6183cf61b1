"""The facet index read back from the shard where no snapshot was left (after a crash): a page
at a time, with a pause after each so that searches meanwhile get the interpreter, and complete
at the end."""

from pathlib import Path

import pytest

from app.store import facet_upkeep
from app.store.edge import EdgeStore
from tests.store.test_facet_snapshot import DOCS, answers, load, snapshot_of


class Pauses:
    """Stands in for the `time` module the upkeep sleeps with."""

    def __init__(self) -> None:
        self.taken: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.taken.append(seconds)


def test_the_documents_are_read_back_a_page_at_a_time_with_a_pause_after_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = EdgeStore(tmp_path, "c")
    load(store)
    expected = answers(store)
    store.close()
    snapshot_of(tmp_path).unlink()  # as a crash leaves it
    pauses = Pauses()
    monkeypatch.setattr(facet_upkeep, "LOAD_PAGE", 2)
    monkeypatch.setattr(facet_upkeep, "time", pauses)
    reopened = EdgeStore(tmp_path, "c")
    try:
        assert reopened.wait_for_facet_index(timeout=60)
        pages = -(-len(DOCS) // 2)
        assert len(pauses.taken) >= pages - 1  # between every two pages
        assert set(pauses.taken) == {facet_upkeep.LOAD_PAUSE_S}
        assert answers(reopened) == expected
    finally:
        reopened.close()
