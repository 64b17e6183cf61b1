"""An index the previous release wrote (0.1.0, index format 1: the shard at the collection path;
`tests/fixtures/make_format1.py` made it with that release's code) opens in this one: moved into
a generation with its settings recorded, every count as it was, the answers of that release to
twenty searches given again, and the document it had accepted but not indexed indexed now."""

import json
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.auth import Principal
from app.backup.manifest import Counts
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.search.algorithms import QueryEncoder
from app.search.api import SearchApi
from app.search.models import SearchBody
from app.search.service import SearchService
from app.store.edge import EdgeStore
from app.store.index_format import IndexSettings
from app.store.layout import INDEX_FILE
from tests.backup.test_roundtrip import searcher
from tests.helpers import running_app

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RECORD = json.loads((FIXTURES / "format1.json").read_text(encoding="utf-8"))


@pytest.fixture
def data(tmp_path: Path) -> Path:
    with tarfile.open(FIXTURES / "format1.tar.xz") as archive:
        archive.extractall(tmp_path / "data", filter="data")
    assert (tmp_path / "data" / "astrolabe" / "edge_config.json").exists()  # format 1
    return tmp_path / "data"


@pytest.fixture
def store(data: Path) -> Iterator[EdgeStore]:
    opened = EdgeStore(data, "astrolabe")
    yield opened
    opened.close()


def same_ranking(found: list[list[Any]], recorded: list[list[Any]]) -> None:
    """The same scores in the same order and, score by score, the same results; only a tie cut
    by the page's end may hold other members of the tie."""
    assert [round(s, 4) for _, s in found] == [round(s, 4) for _, s in recorded]
    last = round(recorded[-1][1], 4) if recorded else None
    for score in {round(s, 4) for _, s in recorded} - {last}:
        expected = {key for key, s in recorded if round(s, 4) == score}
        assert {key for key, s in found if round(s, 4) == score} == expected


def test_the_previous_format_opens_with_its_counts_and_answers(
    data: Path, store: EdgeStore
) -> None:
    record = json.loads((data / "astrolabe" / INDEX_FILE).read_text())
    assert record["shard"] == "shard-000000" and record["format"] == 2
    assert record["settings"] == IndexSettings.current().to_record()
    assert Counts.of(store) == Counts(
        documents=RECORD["documents"],
        chunks=RECORD["chunks"],
        points=RECORD["chunks"] + 1,
        pending=1,
        failed=0,
    )
    api = SearchApi(SearchService(store, QueryEncoder(HashingEncoder(), Bm25Encoder()), 60), store)
    for answer in RECORD["answers"]:
        principal = Principal(answer["user"], (), frozenset({"search"}))
        result = api.search(principal, SearchBody(**answer["request"])).model_dump()
        found = [
            [f"{r['doc_type']}:{r['doc_id']}#{r['chunk_index']}", r["score"]]
            for r in result["results"]
        ]
        same_ranking(found, answer["results"])
        assert result["total_found"] == answer["total_found"], answer["request"]
        for facet, counts in (answer["facets"] or {}).items():
            assert result["facets"][facet] == counts, (answer["request"], facet)


def test_the_document_it_had_accepted_is_indexed_after_the_upgrade(data: Path) -> None:
    with running_app(data, HashingEncoder()) as client:
        deadline = time.monotonic() + 60
        while client.get("/api/v1/status").json()["pending"] and time.monotonic() < deadline:
            time.sleep(0.1)
        status = client.get("/api/v1/status").json()
        assert (status["documents"], status["chunks"], status["pending"]) == (
            RECORD["documents"] + 1,
            RECORD["chunks"] + 1,
            0,
        )
        pending = RECORD["pending_document"]
        hits = searcher(client)({"query": "upgrade", "algorithm": "bm25"})["results"]
        assert [h["doc_id"] for h in hits] == [pending["doc_id"]]
