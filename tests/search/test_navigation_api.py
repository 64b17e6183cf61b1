"""`GET /api/v1/folders` and `GET /api/v1/chunk-context` on the real engine: what they show is
what the user may read, nothing more."""

from typing import Any

from fastapi.testclient import TestClient

from tests.helpers import auth, doc, index, search

LONG = " ".join(f"Paragraph {i} talks about the quarterly budget of team {i}." for i in range(80))


def get(client: TestClient, path: str, user: str = "alice", **params: Any) -> tuple[int, Any]:
    response = client.get(path, params=params, headers=auth(user))
    return response.status_code, response.json()


def tree(client: TestClient, user: str = "alice", **params: Any) -> dict[str, int]:
    status, body = get(client, "/api/v1/folders", user, **params)
    assert status == 200, body
    return {f["path"]: f["count"] for f in body["folders"]}


def files(client: TestClient) -> None:
    def file(doc_id: str, path: str, **fields: Any) -> dict[str, Any]:
        return doc(doc_id, doc_type="file", file_path=path, **fields)

    index(
        client,
        file("1", "/Projects/plan.md", tags=["finance"]),
        file("2", "/Projects/Reports/q3.md"),
        file("3", "/Projects/Reports/2025/q4.md", tags=["finance"]),
        file("4", "/Archive/old.md", acl=["user:bob"]),
        doc("5", doc_type="note"),
    )
    index(
        client,
        file("6", "/Secret/plans.md", owner="bob"),
        file("7", "/Projects/Hidden/x.md", owner="bob"),
        file("8", "/Archive/shared.md", owner="bob", acl=["user:alice"]),
        user="bob",
    )


def test_the_tree_lists_only_folders_of_readable_documents(client: TestClient) -> None:
    files(client)
    assert tree(client) == {"/Archive": 2, "/Projects": 3}
    assert tree(client, parent="/Projects") == {"/Projects/Reports": 2}
    assert tree(client, parent="Projects/Reports/") == {"/Projects/Reports/2025": 1}
    assert tree(client, user="bob") == {"/Archive": 2, "/Projects": 1, "/Secret": 1}
    assert tree(client, user="carol") == {}
    _, body = get(client, "/api/v1/folders", parent="/Projects")
    assert body["folders"] == [
        {"path": "/Projects/Reports", "name": "Reports", "count": 2, "has_children": True}
    ]


def test_the_tree_counts_under_the_other_filters(client: TestClient) -> None:
    files(client)
    assert tree(client, tags="finance") == {"/Projects": 2}
    assert tree(client, parent="/Projects", tags="finance") == {"/Projects/Reports": 1}
    assert tree(client, doc_types="note") == {}
    assert tree(client, modified_after="2030-01-01") == {}
    # a folder filter does not narrow the tree: it is what the tree picks
    assert tree(client, path_prefixes="/Archive") == {"/Archive": 2, "/Projects": 3}


def test_bad_tree_parameters_are_400_naming_them(client: TestClient) -> None:
    for params, field in [
        ({"modified_after": "2025-02-30"}, "modified_after"),
        ({"folder": "/Projects"}, "folder"),
        ({"tags_any": "x"}, "tags_any"),
    ]:
        status, body = get(client, "/api/v1/folders", **params)
        assert status == 400, body
        assert body["error"]["field"] == field


def test_a_results_offsets_give_the_text_around_its_chunk(client: TestClient) -> None:
    index(client, doc("long", content=LONG))
    hits = search(client, query="quarterly budget", granularity="chunk", limit=20)["results"]
    assert len(hits) > 2
    middle = next(h for h in hits if 0 < h["chunk_index"] < h["total_chunks"] - 1)
    start, end = middle["chunk_start_offset"], middle["chunk_end_offset"]
    assert LONG[start:end] == middle["excerpt"]
    status, body = get(
        client, "/api/v1/chunk-context", doc_type="note", doc_id="long", start=start, end=end,
        context=100,
    )  # fmt: skip
    assert status == 200, body
    assert body == {
        "success": True,
        "chunk_text": LONG[start:end],
        "before_context": LONG[start - 100 : start],
        "after_context": LONG[end : end + 100],
        "has_more_before": True,
        "has_more_after": True,
        "chunk_index": middle["chunk_index"],
        "total_chunks": middle["total_chunks"],
        "page_number": None,  # a note is not paged
    }


def test_context_of_an_unreadable_or_unknown_document_is_404(client: TestClient) -> None:
    index(client, doc("mine", content=LONG))
    index(client, doc("bobs", content=LONG, owner="bob"), user="bob")
    for user, doc_id in [("alice", "bobs"), ("alice", "nope"), ("carol", "mine")]:
        status, body = get(
            client, "/api/v1/chunk-context", user, doc_type="note", doc_id=doc_id, start=0, end=10
        )
        assert status == 404, body
        assert body["error"]["code"] == "not_found"


def test_bad_context_parameters_are_400_naming_them(client: TestClient) -> None:
    index(client, doc("mine", content="Short text."))
    base: dict[str, object] = {"doc_type": "note", "doc_id": "mine", "start": 0, "end": 5}
    cases: list[tuple[dict[str, object], str]] = [
        ({"start": None}, "start"),
        ({"doc_type": None}, "doc_type"),
        ({"start": "x"}, "start"),
        ({"end": 0}, "end"),
        ({"start": 5, "end": 5}, "end"),
        ({"end": 999}, "end"),
        ({"context": 10_001}, "context"),
        ({"context": -1}, "context"),
    ]
    for changes, field in cases:
        params: dict[str, Any] = {k: v for k, v in (base | changes).items() if v is not None}
        status, body = get(client, "/api/v1/chunk-context", **params)
        assert status == 400, (changes, body)
        assert body["error"]["field"] == field, (changes, body)
