"""An index the previous release wrote (0.1.0, index format 1: the shard at the collection path;
`tests/fixtures/make_format1.py` made it with that release's code) opens in this one: moved into
a generation once `astrolabe-search reindex` has re-encoded it with this release's BM25, every
count as it was, that release's totals, facets and dense answers to twenty searches given again,
and the document it had accepted but not indexed indexed now."""

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
from app.index_settings import IndexSettings
from app.ingest.reindex import reindex
from app.search.algorithms import QueryEncoder
from app.search.api import SearchApi
from app.search.models.requests import SearchBody
from app.search.service import SearchService
from app.store.edge import EdgeStore
from app.store.errors import IndexOutdated
from app.store.layout import INDEX_FILE
from tests.backup.test_roundtrip import searcher
from tests.fixtures.make_format1 import documents
from tests.helpers import index, running_app

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RECORD = json.loads((FIXTURES / "format1.json").read_text(encoding="utf-8"))


@pytest.fixture
def data(tmp_path: Path) -> Path:
    with tarfile.open(FIXTURES / "format1.tar.xz") as archive:
        archive.extractall(tmp_path / "data", filter="data")
    assert (tmp_path / "data" / "astrolabe" / "edge_config.json").exists()  # format 1
    return tmp_path / "data"


def same_ranking(found: list[list[Any]], recorded: list[list[Any]]) -> None:
    """The same scores in the same order and, score by score, the same results; only a tie cut
    by the page's end may hold other members of the tie."""
    assert [round(s, 4) for _, s in found] == [round(s, 4) for _, s in recorded]
    last = round(recorded[-1][1], 4) if recorded else None
    for score in {round(s, 4) for _, s in recorded} - {last}:
        expected = {key for key, s in recorded if round(s, 4) == score}
        assert {key for key, s in found if round(s, 4) == score} == expected


def answer(store: EdgeStore, user: str, request: dict[str, Any]) -> dict[str, Any]:
    api = SearchApi(SearchService(store, QueryEncoder(HashingEncoder(), Bm25Encoder()), 60), store)
    principal = Principal(user, (), frozenset({"search"}))
    result = api.search(principal, SearchBody(**({"limit": 10} | request))).model_dump()
    result["ranking"] = [
        [f"{r['doc_type']}:{r['doc_id']}#{r['chunk_index']}", r["score"]] for r in result["results"]
    ]
    return result


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EdgeStore]:
    """The same documents indexed by this release."""
    data = tmp_path_factory.mktemp("fresh") / "data"
    with running_app(data, HashingEncoder()) as client:
        index(client, *documents())
    opened = EdgeStore(data, "astrolabe")
    yield opened
    opened.close()


def test_the_previous_format_is_refused_in_one_line_naming_reindex(data: Path) -> None:
    before = sorted(p.relative_to(data) for p in data.rglob("*"))
    with pytest.raises(IndexOutdated, match=r"bm25\.b\).*`astrolabe-search reindex`"):
        EdgeStore(data, "astrolabe")
    assert sorted(p.relative_to(data) for p in data.rglob("*")) == before


def test_after_reindex_it_keeps_its_counts_and_answers_as_this_release_would(
    data: Path, fresh: EdgeStore
) -> None:
    """0.1.0's BM25 (b 0.75, mean length 256) differs from this release's: `reindex` re-encodes
    the stored text. Counts, totals, facets and the dense answers stay 0.1.0's; every answer is
    then exactly that of the same documents indexed by this release."""
    assert reindex(data, "astrolabe", HashingEncoder()) is not None
    store = EdgeStore(data, "astrolabe")
    try:
        record = json.loads((data / "astrolabe" / INDEX_FILE).read_text())
        assert record["shard"] == "shard-000000" and record["format"] == 2
        assert record["settings"] == IndexSettings.current().to_record()
        assert Counts.of(store) == Counts(
            documents=RECORD["documents"],
            chunks=RECORD["chunks"],
            points=RECORD["chunks"] + 2,  # the placeholder, and BM25's statistics
            pending=1,
            failed=0,
        )
        for recorded in RECORD["answers"]:
            found = answer(store, recorded["user"], recorded["request"])
            assert found["total_found"] == recorded["total_found"], recorded["request"]
            assert found["facets"] == recorded["facets"], recorded["request"]
            if recorded["request"].get("algorithm") == "semantic":
                same_ranking(found["ranking"], recorded["results"])
            expected = answer(fresh, recorded["user"], recorded["request"])["ranking"]
            # By document: chunks of `long` with no query word tie in the dense branch, and a
            # tie is cut by the order of the points in the shard, which a rewrite changes.
            assert [[k.split("#")[0], s] for k, s in found["ranking"]] == [
                [k.split("#")[0], s] for k, s in expected
            ], recorded["request"]
    finally:
        store.close()


def test_the_document_it_had_accepted_is_indexed_after_the_upgrade(data: Path) -> None:
    reindex(data, "astrolabe", HashingEncoder())
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
