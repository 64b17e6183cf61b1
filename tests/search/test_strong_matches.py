"""Honest counts with the real model: `strong_found` says how many results match well (a cosine
of 0.35, or half the best BM25 score), `strong` marks each, `strong_only` keeps only them; a
nonsense query has none, while hybrid and semantic still rank everything the filters allow."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.embeddings.dense import MiniLMEncoder
from tests.helpers import DAY, LONG, MAY_4, doc, ids, index, running_app, search, viz

CORPUS = [
    doc("reactor", "Neutron flux measurements in the reactor core during the power run."),
    doc("reactor2", "The reactor core temperature and the neutron flux were logged."),
    doc("comet", "The comet orbit was computed from telescope observations."),
    doc("garden", "Tomato seedlings grow in the spring garden.", modified_at=MAY_4 - DAY),
    doc("budget", "The quarterly budget review of the finance team."),
    doc("long", LONG, doc_type="file", file_path="/Home/long.md"),
]
NONSENSE = "zzqxqv nonexistentword"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEncoder) -> Iterator[TestClient]:
    with running_app(tmp_path_factory.mktemp("strong") / "data", minilm) as running:
        index(running, *CORPUS)
        yield running


def _strong_ids(found: dict[str, Any]) -> set[str]:
    return {r["doc_id"] for r in found["results"] if r["strong"]}


@pytest.mark.parametrize("algorithm", ["hybrid", "semantic", "bm25"])
def test_a_nonsense_query_has_no_strong_match(client: TestClient, algorithm: str) -> None:
    found = search(client, query=NONSENSE, algorithm=algorithm, limit=100)
    assert found["strong_found"] == 0
    assert not _strong_ids(found)
    if algorithm != "bm25":  # dense ranking: everything the filters allow, none of it well
        everything = search(client, query="", limit=100, granularity="document")
        assert len(found["results"]) == found["total_found"] > len(everything["results"])
    only = search(client, query=NONSENSE, algorithm=algorithm, strong_only=True)
    assert (only["results"], only["total_found"], only["strong_found"]) == ([], 0, 0)


@pytest.mark.parametrize("algorithm", ["hybrid", "semantic", "bm25"])
@pytest.mark.parametrize("granularity", ["chunk", "document"])
def test_a_real_query_counts_its_strong_matches(
    client: TestClient, algorithm: str, granularity: str
) -> None:
    asked: dict[str, Any] = {"query": "neutron flux in the reactor", "algorithm": algorithm}
    found = search(client, limit=100, granularity=granularity, **asked)
    assert {"reactor", "reactor2"} <= _strong_ids(found)
    assert not {"garden", "budget", "comet"} & _strong_ids(found)
    strong = [r for r in found["results"] if r["strong"]]
    assert found["strong_found"] == len(strong) < found["total_found"] or algorithm == "bm25"
    only = search(client, limit=100, granularity=granularity, strong_only=True, **asked)
    assert [(r["doc_id"], r["chunk_index"]) for r in only["results"]] == [
        (r["doc_id"], r["chunk_index"]) for r in strong
    ]
    assert only["total_found"] == only["strong_found"] == len(strong)
    status, by_viz = viz(client, granularity=granularity, strong_only="true", **asked)
    assert status == 200 and ids(by_viz) == ids(only)


def test_strong_matches_follow_the_cosine_and_the_bm25_floors(client: TestClient) -> None:
    semantic = search(client, query="comet orbit", algorithm="semantic", limit=100)
    for result in semantic["results"]:
        assert result["strong"] == (result["relevance"] >= 0.35), result
    bm25 = search(client, query="comet telescope garden", algorithm="bm25", limit=100)
    for result in bm25["results"]:
        assert result["strong"] == (result["relevance"] >= 0.5), result


def test_a_date_sort_of_the_strong_matches_keeps_them(client: TestClient) -> None:
    asked: dict[str, Any] = {
        "query": "neutron flux in the reactor",
        "strong_only": True,
        "limit": 100,
    }
    best_first = search(client, **asked)
    newest = search(client, sort="newest", **asked)
    assert sorted(ids(newest)) == sorted(ids(best_first)) and newest["results"]
    dates = [r["modified_at"] for r in newest["results"]]
    assert dates == sorted(dates, reverse=True)


def test_browsing_has_no_strong_matches(client: TestClient) -> None:
    found = search(client, query="")
    assert found["strong_found"] is None
    assert found["results"] and all(r["strong"] is None for r in found["results"])
    assert search(client, query="", strong_only=True)["total_found"] == found["total_found"]
