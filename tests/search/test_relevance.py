"""Relevance in [0, 1] on every result, min_relevance on it before paging and counting,
dense_weight and the fusions, and query feedback that never reads what the user cannot."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.search.fusion import Branch, Fusion, FusionMethod
from app.store.base import Hit
from tests.helpers import assert_invalid, auth, doc, ids, post_search, search, shared_app

CORPUS = [
    doc("reactor", "Neutron flux measurements in the reactor core during the power run."),
    doc("reactor2", "The reactor core temperature and the neutron flux were logged."),
    doc("comet", "The comet orbit was computed from telescope observations."),
    doc("garden", "Tomato seedlings grow in the spring garden."),
    doc("budget", "The quarterly budget review of the finance team."),
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    yield from shared_app(tmp_path_factory, *CORPUS)


def _hits(*scores: float) -> list[Hit]:
    return [Hit(f"p{i}", score, {}) for i, score in enumerate(scores)]


@pytest.mark.parametrize("method", list(FusionMethod))
def test_a_hit_every_branch_ranks_first_has_relevance_one(method: FusionMethod) -> None:
    fusion = Fusion(method, rrf_k=60)
    branches = [Branch(_hits(0.9, 0.5, 0.1), 1.2, cosine=True), Branch(_hits(7.0, 3.0), 0.8)]
    fused = {hit.id: hit.score for hit in fusion.fuse(branches)}
    best = fusion.best_possible(branches)
    assert fused["p0"] == pytest.approx(best)
    assert fused["p1"] < best and fused["p2"] < fused["p1"]
    one_branch = [branches[0]]  # a query of stopwords only: the dense branch alone
    assert max(h.score for h in fusion.fuse(one_branch)) == pytest.approx(
        fusion.best_possible(one_branch)
    )


def test_every_result_carries_its_relevance(client: TestClient) -> None:
    sources = {"hybrid": "fusion_normalised", "semantic": "cosine", "bm25": "bm25_normalised"}
    for algorithm, source in sources.items():
        for fusion in ("rrf", "dbsf", "convex"):
            found = search(client, query="reactor neutron flux", algorithm=algorithm, fusion=fusion)
            relevance = [r["relevance"] for r in found["results"]]
            assert found["results"] and all(0 <= r <= 1 for r in relevance), (algorithm, fusion)
            assert {r["relevance_source"] for r in found["results"]} == {source}
            assert relevance == sorted(relevance, reverse=True)
    top = search(client, query="reactor neutron flux", algorithm="bm25")["results"][0]
    assert top["relevance"] == 1.0  # bm25: over the best score of the search
    cosine = search(client, query="reactor neutron flux", algorithm="semantic")["results"]
    assert [r["relevance"] for r in cosine] == [round(max(0, r["score"]), 6) for r in cosine]
    browsing = search(client, query="")["results"]
    assert browsing and all(r["relevance"] is None for r in browsing)


def test_a_hybrid_hit_both_branches_rank_first_is_close_to_one(client: TestClient) -> None:
    dense = search(client, query="comet orbit telescope", algorithm="semantic")
    sparse = search(client, query="comet orbit telescope", algorithm="bm25")
    assert ids(dense)[0] == ids(sparse)[0] == "comet"
    for fusion in ("rrf", "dbsf", "convex"):
        hybrid = search(client, query="comet orbit telescope", fusion=fusion)
        assert ids(hybrid)[0] == "comet"
        assert hybrid["results"][0]["relevance"] > 0.95, fusion
        assert hybrid["results"][-1]["relevance"] < 0.9, fusion


def test_min_relevance_applies_before_paging_and_counting(client: TestClient) -> None:
    for algorithm in ("hybrid", "semantic", "bm25"):
        body: dict[str, Any] = {"query": "reactor neutron flux", "algorithm": algorithm}
        everything = search(client, **body, limit=100)["results"]
        floor = everything[1]["relevance"]
        kept = [r["doc_id"] for r in everything if r["relevance"] >= floor]
        floored = search(client, **body, limit=100, min_relevance=floor)
        assert ids(floored) == kept and floored["total_found"] == len(kept), algorithm
        paged = search(client, **body, limit=1, offset=1, min_relevance=floor)
        assert ids(paged) == kept[1:2] and paged["total_found"] == len(kept), algorithm


def _untied(found: dict[str, Any]) -> list[str]:
    """The results before the first score another result shares."""
    scores = [r["score"] for r in found["results"]]
    untied = []
    for result in found["results"]:
        if scores.count(result["score"]) > 1:
            break
        untied.append(result["doc_id"])
    return untied


def test_dense_weight_moves_the_hybrid_between_its_branches(client: TestClient) -> None:
    query = "reactor flux comet garden budget"
    for fusion in ("rrf", "convex"):
        dense_only = search(client, query=query, fusion=fusion, dense_weight=1.0, limit=5)
        sparse_only = search(client, query=query, fusion=fusion, dense_weight=0.0, limit=5)
        semantic = search(client, query=query, algorithm="semantic", limit=5)
        bm25 = search(client, query=query, algorithm="bm25", limit=5)
        distinct = _untied(semantic)  # the hashing embedder gives many documents cosine 0
        assert ids(dense_only)[: len(distinct)] == distinct, fusion
        assert ids(sparse_only)[: len(_untied(bm25))] == _untied(bm25), fusion
    for bad in (-0.1, 1.5, "0.5", True):
        status, body = post_search(client, query="x", dense_weight=bad)
        assert_invalid(status, body, "dense_weight")
    status, body = post_search(client, query="x", fusion="linear")
    assert_invalid(status, body, "fusion")


def test_feedback_searches_again_and_keeps_every_rule(client: TestClient) -> None:
    for algorithm in ("hybrid", "semantic", "bm25"):
        plain = search(client, query="neutron flux", algorithm=algorithm)
        expanded = search(client, query="neutron flux", algorithm=algorithm, feedback=True)
        assert set(ids(plain)[:2]) == set(ids(expanded)[:2]) == {"reactor", "reactor2"}
        no_files = search(client, query="neutron flux", feedback=True, doc_types=["file"])
        assert no_files["results"] == [] and no_files["total_found"] == 0


def test_feedback_never_reads_a_document_the_user_cannot(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Alice's private note shares the query's words and one rare word with a note Bob may
    read. Expanded from Alice's note, Bob's query would find that other note by the rare word
    alone; Alice, who may read both, does find it that way (so the test can fail)."""
    private = doc("private", "Quasar spectra: the quasar redshift zyzzyvas show.", title="Spectra")
    bridge = doc("bridge", "Zyzzyvas zyzzyvas in the marsh.", title="Marsh", acl=["user:bob"])
    other = doc("other", "A quasar survey of the southern sky.", title="Survey", acl=["user:bob"])
    for app in shared_app(tmp_path_factory, private, bridge, other):
        alice = search(app, query="quasar redshift", algorithm="bm25", feedback=True)
        assert "bridge" in ids(alice)  # reached through the expansion only
        assert "bridge" not in ids(search(app, query="quasar redshift", algorithm="bm25"))
        bob = search(app, user="bob", query="quasar redshift", algorithm="bm25", feedback=True)
        assert ids(bob) == ["other"]


def test_status_reports_the_bm25_statistic(client: TestClient) -> None:
    status = client.get("/api/v1/status", headers=auth()).json()
    assert 5 < status["bm25_avg_len"] < 15  # these one-line notes, in BM25 tokens
    assert status["documents"] == len(CORPUS) and status["chunks"] == len(CORPUS)
    assert status["supported_fusions"] == ["rrf", "dbsf", "convex"]
