"""Search through the HTTP API with the real model on the real embedded engine."""

from fastapi.testclient import TestClient

from tests.helpers import auth, doc, ids, index, search

CORPUS = [
    doc("cat", "The kitten slept all afternoon curled up on the warm windowsill.", title="Pets"),
    doc(
        "budget", "Quarterly revenue rose while operating costs fell, so the budget has a surplus."
    ),
    doc("k8s", "We deploy the containers to the cluster with Helm charts and rolling updates."),
    doc("rare", "The zygomorphic flowers of the orchid attract a single species of bee."),
    doc("pasta", "Boil the spaghetti in salted water and toss it with garlic and olive oil."),
]


def test_semantic_finds_a_paraphrase(model_client: TestClient) -> None:
    index(model_client, *CORPUS)
    result = search(model_client, query="a young cat napping in the sun", algorithm="semantic")
    assert ids(result)[0] == "cat"
    assert result["algorithm"] == "semantic"


def test_bm25_finds_a_rare_exact_term_and_only_documents_holding_it(
    model_client: TestClient,
) -> None:
    index(model_client, *CORPUS)
    result = search(model_client, query="zygomorphic", algorithm="bm25")
    assert ids(result) == ["rare"]
    assert result["results"][0]["score"] > 0


def test_hybrid_ranks_a_document_both_retrievers_find_above_one_found_by_one(
    model_client: TestClient,
) -> None:
    both = doc("both", "Kubernetes cluster deployment with rolling updates for our containers.")
    dense_only = doc("dense", "Shipping container images to the orchestration platform safely.")
    index(model_client, *CORPUS, both, dense_only)
    query = "kubernetes rolling updates"
    bm25 = ids(search(model_client, query=query, algorithm="bm25", limit=20))
    assert "dense" not in bm25 and "both" in bm25
    hybrid = search(model_client, query=query, limit=20)
    ranking = ids(hybrid)
    assert ranking.index("both") < ranking.index("dense")
    top = hybrid["results"][0]["score"]
    assert 0 < top <= 2 / 60 + 1e-6  # RRF k=60 (engine ranks from 0): at most 1/60 a branch


def test_dbsf_fusion_and_document_granularity(model_client: TestClient) -> None:
    long_text = " ".join(["Kubernetes rolling updates keep the cluster available."] * 80)
    index(model_client, *CORPUS, doc("long", long_text))
    chunks = search(model_client, query="kubernetes rolling updates", limit=10, fusion="dbsf")
    assert chunks["fusion"] == "dbsf"
    assert ids(chunks).count("long") > 1
    documents = search(
        model_client, query="kubernetes rolling updates", limit=10, granularity="document"
    )
    assert ids(documents).count("long") == 1
    assert len(ids(documents)) == len(set(ids(documents)))


def test_paging_with_offset_and_limit(model_client: TestClient) -> None:
    index(model_client, *CORPUS)
    everything = ids(search(model_client, query="plans and notes", limit=5))
    first = ids(search(model_client, query="plans and notes", limit=2))
    second = ids(search(model_client, query="plans and notes", limit=2, offset=2))
    assert first + second == everything[:4]


def test_a_user_never_sees_another_users_document(model_client: TestClient) -> None:
    index(
        model_client,
        doc("mine", "secret budget plan", owner="alice"),
        doc("bobs", "secret budget plan", owner="bob"),
        doc("shared", "secret budget plan", owner="bob", acl=["user:alice"]),
        doc("team", "secret budget plan", owner="bob", acl=["group:eng"]),
    )
    for algorithm in ("hybrid", "semantic", "bm25"):
        plain = search(
            model_client, query="secret budget", algorithm=algorithm, include_facets=True
        )
        assert sorted(ids(plain)) == ["mine", "shared"]
        assert plain["facets"]["owner"] == {"alice": 1, "bob": 1}
        member = search(model_client, groups=["eng"], query="secret budget", algorithm=algorithm)
        assert sorted(ids(member)) == ["mine", "shared", "team"]
    carol = search(model_client, user="carol", query="secret budget", owners=["bob"])
    assert carol["results"] == [] and carol["total_found"] == 0


def test_response_shape(model_client: TestClient) -> None:
    index(
        model_client,
        doc("f", "the report", doc_type="file", file_path="/Projects/q3.md", tags=["x"]),
    )
    result = search(model_client, query="report")
    assert set(result) == {
        "query",
        "algorithm",
        "algorithm_used",
        "fusion",
        "granularity",
        "sort",
        "results",
        "total_found",
        "strong_found",
        "verified_chunk_count",
        "dropped_document_count",
        "verification",
        "filters",
        "timing_ms",
    }
    hit = result["results"][0]
    assert hit["file_path"] == "/Projects/q3.md" and hit["modified_at"].endswith("Z")
    assert (hit["chunk_index"], hit["total_chunks"]) == (0, 1)
    assert 0 < hit["relevance"] <= 1 and hit["relevance_source"] == "fusion_normalised"
    assert set(result["timing_ms"]) == {"embed", "search", "verify", "total"}
    assert (
        model_client.get("/api/v1/status", headers=auth())
        .json()["embedding_model"]
        .endswith("all-MiniLM-L6-v2")
    )
