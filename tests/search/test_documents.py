"""DocumentReader on the real embedded engine: which documents a user can see."""

from fastapi.testclient import TestClient

from app.auth import Principal
from app.search.documents import DocumentReader
from tests.helpers import doc, index

ALICE = Principal(user="alice")


def reader(client: TestClient) -> DocumentReader:
    services = client.app.state.astrolabe.require_services()  # type: ignore[attr-defined]
    return DocumentReader(services.store)


def test_visibility_and_counts_follow_the_access_rule(client: TestClient) -> None:
    index(client, doc("mine", "a"), doc("shared", "b", owner="bob", acl=["user:alice"]))
    index(client, doc("bobs", "c", owner="bob"), user="bob")
    documents = reader(client)
    assert documents.is_visible(ALICE, ("note", "shared"))
    assert not documents.is_visible(ALICE, ("note", "bobs"))
    assert not documents.is_visible(ALICE, ("file", "mine"))
    assert documents.count_visible(ALICE) == 2
    assert documents.count_visible(Principal(user="bob")) == 2
    assert documents.count_visible(Principal(user="bob", groups=("eng",))) == 2
