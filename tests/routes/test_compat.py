"""The Astrolabe app's PHP client, replayed request by request: every field it reads is there."""

from typing import Any

from fastapi.testclient import TestClient

from tests.helpers import auth, doc, index

CORPUS = [
    doc("n1", "Budget planning for the quarterly report", doc_type="note"),
    doc("f1", "Quarterly report figures and budget", doc_type="file", file_path="/Reports/q3.md"),
    doc("f2", "Gardening notes about tomatoes", doc_type="file", file_path="/Garden/tomato.md"),
    doc("c1", "Deck card: finish the budget slides", doc_type="deck_card"),
]
RESULT_FIELDS = {"id", "doc_type", "title", "excerpt", "score", "chunk_index", "total_chunks"}


def post(client: TestClient, path: str, body: dict[str, Any]) -> Any:
    return client.post(path, json=body, headers=auth())


def test_vector_viz_search_as_the_search_page_sends_it(client: TestClient) -> None:
    index(client, *CORPUS)
    body = {
        "query": "quarterly budget",
        "algorithm": "hybrid",
        "limit": 20,
        "include_pca": True,
        "doc_types": ["note", "file"],
        "modified_after": "2026-01-01T00:00:00Z",
        "modified_before": "2026-12-31T23:59:59Z",
        "path_prefixes": [],
        "fusion": "rrf",
        "granularity": "chunk",
        "rerank": False,
        "min_relevance": 0.0,
    }
    response = post(client, "/api/v1/vector-viz/search", body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["success"] is True and data["reranked"] is False
    assert data["algorithm_used"] == "hybrid"
    assert data["total_documents"] == len(data["results"]) == 3
    assert {r["doc_type"] for r in data["results"]} == {"note", "file"}
    for result in data["results"]:
        assert set(result) >= RESULT_FIELDS and isinstance(result["id"], str)
    assert next(r for r in data["results"] if r["id"] == "f1")["path"] == "/Reports/q3.md"
    assert len(data["coordinates_3d"]) == 3 and all(len(p) == 3 for p in data["coordinates_3d"])
    assert len(data["query_coords"]) == 3
    assert set(data["pca_variance"]) == {"pc1", "pc2", "pc3"}


def test_vector_viz_with_fewer_than_two_results_has_empty_coordinates(client: TestClient) -> None:
    index(client, *CORPUS)
    body = {"query": "tomatoes", "algorithm": "bm25", "limit": 10, "include_pca": True}
    data = post(client, "/api/v1/vector-viz/search", body).json()
    assert [r["id"] for r in data["results"]] == ["f2"]
    assert data["coordinates_3d"] == [] and data["query_coords"] == []


def test_vector_viz_without_pca_and_its_limit(client: TestClient) -> None:
    index(client, *CORPUS)
    body = {"query": "budget", "algorithm": "semantic", "limit": 50, "include_pca": False}
    data = post(client, "/api/v1/vector-viz/search", body).json()
    assert "coordinates_3d" not in data and data["success"] is True
    too_many = post(client, "/api/v1/vector-viz/search", body | {"limit": 51})
    assert too_many.status_code == 400
    assert too_many.json()["error"]["field"] == "limit"


def test_unified_search_provider_request(client: TestClient) -> None:
    index(client, *CORPUS)
    body = {
        "query": "budget",
        "algorithm": "hybrid",
        "fusion": "rrf",
        "score_threshold": 0,
        "limit": 5,
        "offset": 0,
        "include_pca": False,
        "include_chunks": True,
        "doc_types": ["note", "deck_card"],
    }
    data = post(client, "/api/v1/search", body).json()
    assert data["algorithm_used"] == "hybrid"
    assert sorted(r["id"] for r in data["results"]) == ["c1", "n1"]
    assert data["total_found"] == 2
    assert all(r["excerpt"] for r in data["results"])
    without_chunks = post(client, "/api/v1/search", body | {"include_chunks": False}).json()
    assert [r["excerpt"] for r in without_chunks["results"]] == ["", ""]


def test_status_fields_the_app_reads(client: TestClient) -> None:
    data = client.get("/api/v1/status").json()
    assert data["supported_search_types"] == ["hybrid", "semantic", "bm25"]
    assert data["rerank_available"] is False


def test_unsupported_algorithm_and_rerank_answer_the_apps_422(client: TestClient) -> None:
    body = {"query": "x", "algorithm": "splade", "limit": 5, "include_pca": False}
    for path in ("/api/v1/vector-viz/search", "/api/v1/search"):
        response = post(client, path, body)
        assert response.status_code == 422, path
        data = response.json()
        assert data["error"] == "unsupported_search_type" and data["requested"] == "splade"
        assert data["supported_search_types"] == ["hybrid", "semantic", "bm25"]
        rerank = post(client, path, {"query": "x", "algorithm": "hybrid", "rerank": True})
        assert rerank.status_code == 422 and rerank.json()["error"] == "rerank_not_configured"


def test_our_own_clients_keep_the_400_envelope(client: TestClient) -> None:
    response = post(client, "/api/v1/search", {"query": "x", "algorithm": "splade"})
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "algorithm"


def test_min_relevance_cuts_weak_results(client: TestClient) -> None:
    index(client, *CORPUS)
    body = {"query": "quarterly budget report", "algorithm": "bm25", "limit": 10}
    everything = post(client, "/api/v1/vector-viz/search", body).json()["results"]
    strict = post(client, "/api/v1/vector-viz/search", body | {"min_relevance": 0.99}).json()
    best = max(r["score"] for r in everything)
    assert 0 < len(strict["results"]) < len(everything)
    assert all(r["score"] >= 0.99 * best for r in strict["results"])
    # applied before paging and counting: the total is what the floor leaves
    assert strict["total_found"] == strict["total_documents"] == len(strict["results"])


def test_min_relevance_is_relative_to_the_best_result_not_to_the_page(client: TestClient) -> None:
    index(client, *CORPUS)
    body = {"query": "quarterly budget report", "algorithm": "bm25", "limit": 1, "offset": 0}
    everything = post(client, "/api/v1/search", body | {"limit": 10}).json()["results"]
    best = everything[0]["score"]
    floor = 0.5
    kept = [r for r in everything if r["score"] >= floor * best]
    assert 1 < len(kept) < len(everything)  # the corpus must make the floor cut something
    second = post(client, "/api/v1/search", body | {"offset": 1, "min_relevance": floor}).json()
    assert [r["doc_id"] for r in second["results"]] == [kept[1]["doc_id"]]
    assert second["total_found"] == len(kept)


def test_alias_and_search_return_the_same_documents(client: TestClient) -> None:
    index(client, *CORPUS)
    filters = {"doc_types": ["file", "note"], "path_prefixes": ["/Reports"], "limit": 10}
    for algorithm in ("hybrid", "semantic", "bm25"):
        body = {"query": "budget report", "algorithm": algorithm, **filters}
        ours = post(client, "/api/v1/search", body).json()["results"]
        alias = post(client, "/api/v1/vector-viz/search", body).json()["results"]
        assert [(r["doc_type"], r["id"]) for r in alias] == [
            (r["doc_type"], r["doc_id"]) for r in ours
        ]
        assert [r["id"] for r in ours] == ["f1"]
