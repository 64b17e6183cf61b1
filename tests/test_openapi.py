"""The committed OpenAPI document is exactly what the running app serves."""

import json

from fastapi.testclient import TestClient

from scripts.export_openapi import TARGET, render


def test_committed_openapi_matches_the_app(client: TestClient) -> None:
    committed = TARGET.read_text(encoding="utf-8")
    assert committed == render(), (
        "openapi/openapi.json drifted: run python -m scripts.export_openapi"
    )
    assert client.get("/openapi.json").json() == json.loads(committed)


def test_openapi_documents_the_contract() -> None:
    spec = json.loads(render())
    paths = spec["paths"]
    for path, method in [
        ("/api/v1/search", "post"),
        ("/api/v1/documents", "post"),
        ("/api/v1/documents/{doc_type}/{doc_id}", "get"),
        ("/api/v1/documents/{doc_type}/{doc_id}", "delete"),
        ("/api/v1/status", "get"),
        ("/api/v1/me", "get"),
        ("/viz/search", "get"),
        ("/healthz", "get"),
        ("/readyz", "get"),
    ]:
        assert method in paths[path], (path, method)
    search = paths["/api/v1/search"]["post"]["responses"]
    assert {"200", "400", "401", "403"} <= set(search)
    assert "bearer" in json.dumps(spec["components"]["securitySchemes"]).lower()


def test_openapi_types_every_document_field() -> None:
    schemas = json.loads(render())["components"]["schemas"]
    documents = schemas["DocumentBatch"]["properties"]["documents"]
    assert documents["items"] == {"$ref": "#/components/schemas/DocumentIn"}
    assert {"doc_type", "doc_id", "owner", "modified_at", "acl"} <= set(
        schemas["DocumentIn"]["properties"]
    )
    for name in ("DocumentIn", "DocumentBatch", "SearchBody"):
        assert schemas[name]["additionalProperties"] is False, name
        assert name == "DocumentBatch" or schemas[name]["examples"], name
