"""Writing documents through the HTTP API, on the real embedded engine."""

from pathlib import Path

from fastapi.testclient import TestClient

from app.embeddings.dense import HashingEncoder
from tests.helpers import auth, doc, ids, index, running_app, search

LONG = " ".join(f"Sentence number {i} talks about orbital mechanics." for i in range(300))


def test_wait_true_indexes_and_reports_chunks(client: TestClient) -> None:
    body = index(client, doc("1", LONG), doc("2", "short note"))
    status = client.get("/api/v1/documents/note/1", headers=auth()).json()
    assert body["indexed"] == 2
    assert status["status"] == "indexed"
    assert status["chunks"] > 1
    assert body["chunks"] == status["chunks"] + 1
    assert status["modified_at"] == "2026-05-04T10:00:00Z"


def test_accepted_document_becomes_searchable(client: TestClient) -> None:
    response = client.post("/api/v1/documents", json={"documents": [doc("a1")]}, headers=auth())
    assert response.status_code == 202
    assert response.json() == {"accepted": 1}
    services = client.app.state.astrolabe.services  # type: ignore[attr-defined]
    services.ingest.queue.submit_barrier().result(timeout=30)
    assert client.get("/api/v1/documents/note/a1", headers=auth()).json()["status"] == "indexed"
    assert ids(search(client, query="plain text a1")) == ["a1"]


def test_resending_a_shorter_version_leaves_no_stale_chunk(client: TestClient) -> None:
    index(client, doc("r", LONG))
    index(client, doc("r", "Brand new short body about gardening."))
    assert client.get("/api/v1/documents/note/r", headers=auth()).json()["chunks"] == 1
    stale = search(client, query="orbital mechanics sentence", algorithm="bm25", limit=100)
    assert stale["results"] == []
    fresh = search(client, query="gardening", algorithm="bm25")
    assert [(r["doc_id"], r["total_chunks"]) for r in fresh["results"]] == [("r", 1)]


def test_same_doc_id_under_two_doc_types_is_two_documents(client: TestClient) -> None:
    index(
        client, doc("42", "a note about violins"), doc("42", "a file about cellos", doc_type="file")
    )
    client.delete("/api/v1/documents/note/42", headers=auth())
    assert client.get("/api/v1/documents/note/42", headers=auth()).status_code == 404
    remaining = search(client, query="", limit=10)
    assert [(r["doc_type"], r["doc_id"]) for r in remaining["results"]] == [("file", "42")]


def test_delete_removes_every_chunk_and_unknown_is_404(client: TestClient) -> None:
    index(client, doc("d", LONG))
    assert client.delete("/api/v1/documents/note/d", headers=auth()).status_code == 204
    assert search(client, query="orbital", algorithm="bm25")["results"] == []
    missing = client.delete("/api/v1/documents/note/d", headers=auth())
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
    assert client.get("/api/v1/documents/note/nope", headers=auth()).status_code == 404


def test_invalid_document_rejects_the_whole_batch(client: TestClient) -> None:
    batch = [doc("ok1"), doc("bad", modified_at="2026-13-01"), doc("ok2")]
    response = client.post("/api/v1/documents?wait=true", json={"documents": batch}, headers=auth())
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == "documents[1].modified_at"
    assert "note:bad" in error["message"]
    for doc_id in ("ok1", "bad", "ok2"):
        assert client.get(f"/api/v1/documents/note/{doc_id}", headers=auth()).status_code == 404


def test_document_field_rules(client: TestClient) -> None:
    cases = {
        "doc_type": doc("x", doc_type="Note"),
        "doc_id": doc(""),
        "owner": {k: v for k, v in doc("x").items() if k != "owner"},
        "file_path": doc("x", doc_type="file", file_path="relative/path.md"),
        "acl": doc("x", acl=["bob"]),
        "tags": doc("x", tags="urgent"),
    }
    for field, bad in cases.items():
        response = client.post("/api/v1/documents", json={"documents": [bad]}, headers=auth())
        assert response.status_code == 400, field
        assert response.json()["error"]["field"] == f"documents[0].{field}"
    too_many = {"documents": [doc(str(i)) for i in range(257)]}
    assert client.post("/api/v1/documents", json=too_many, headers=auth()).status_code == 400
    assert (
        client.post("/api/v1/documents", json={"documents": []}, headers=auth()).status_code == 400
    )


def test_index_scope_is_required_to_write(client: TestClient) -> None:
    response = client.post(
        "/api/v1/documents", json={"documents": [doc("1")]}, headers=auth(scope="search")
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_restart_on_the_same_directory_keeps_every_document(tmp_path: Path) -> None:
    encoder = HashingEncoder()
    with running_app(tmp_path, encoder) as first:
        index(first, *(doc(str(i), f"document body {i}") for i in range(30)))
    with running_app(tmp_path, encoder) as second:
        status = second.get("/api/v1/status", headers=auth()).json()
        assert (status["documents"], status["pending"]) == (30, 0)
        assert search(second, query="", limit=100)["total_found"] == 30
        assert ids(search(second, query="document body 7", algorithm="bm25", limit=1)) == ["7"]


def test_accepted_work_survives_a_restart(tmp_path: Path) -> None:
    """Placeholders written but never embedded (the worker never ran) are resumed at start."""
    from app.embeddings.sparse import Bm25Encoder
    from app.ingest.models import validate_batch
    from app.ingest.pipeline import Indexer
    from app.store.edge import EdgeStore

    store = EdgeStore(tmp_path, "astrolabe")
    Indexer(store, HashingEncoder(), Bm25Encoder()).accept(validate_batch([doc("p1"), doc("p2")]))
    store.close()
    with running_app(tmp_path, HashingEncoder()) as client:
        client.app.state.astrolabe.services.ingest.queue.submit_barrier().result(timeout=30)  # type: ignore[attr-defined]
        assert sorted(ids(search(client, query=""))) == ["p1", "p2"]


def test_placeholders_are_never_returned(tmp_path: Path) -> None:
    """Accepted but not yet embedded: no algorithm, browse or facet shows the document."""
    from app.auth import Principal
    from app.embeddings.sparse import Bm25Encoder
    from app.ingest.models import validate_batch
    from app.ingest.pipeline import Indexer
    from app.search.algorithms import Algorithm, QueryEncoder
    from app.search.service import SearchQuery, SearchService
    from app.store.edge import EdgeStore

    store = EdgeStore(tmp_path, "astrolabe")
    sparse = Bm25Encoder()
    indexer = Indexer(store, HashingEncoder(), sparse)
    indexer.accept(validate_batch([doc("p1", "pending words"), doc("p2", "pending words")]))
    service = SearchService(store, QueryEncoder(HashingEncoder(), sparse), rrf_k=60)
    alice = Principal("alice")
    try:
        for text in ("", "pending words"):
            for algorithm in Algorithm:
                query = SearchQuery(text=text, algorithm=algorithm, include_facets=True)
                outcome = service.search(alice, query)
                assert (outcome.hits, outcome.total_found) == ([], 0)
                assert outcome.facets is not None and outcome.facets["owner"] == {}
        assert len(indexer.pending_jobs()) == 2
    finally:
        store.close()
