"""The connector through the running service: change the dialect's tree, tick, search."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import auth
from tests.nextcloud.conftest import ALICE, BOB, CAROL
from tests.nextcloud.connector_helpers import (
    WEBHOOK_SECRET,
    connect,
    connected_service,
    connector_of,
    found,
    settle,
    users,
)
from tests.nextcloud.dialect import (
    SHARE_GROUP,
    SHARE_LINK,
    SHARE_USER,
    NextcloudDialect,
    vevent,
)


@pytest.fixture
def service(tmp_path: Path, nc: NextcloudDialect) -> Iterator[TestClient]:
    with connected_service(tmp_path / "data", nc) as client:
        yield client


def ordinary_tick(service: TestClient, uid: str) -> None:
    """Wake uid's sync as its interval would (not a forced tick) and wait for the tick."""
    connector = connector_of(service)
    ticks = connector.ticks()
    connector.sync_now(uid, full=False)
    deadline = time.monotonic() + 30
    while connector.ticks() <= ticks and time.monotonic() < deadline:
        time.sleep(0.01)


def indexed_documents(service: TestClient) -> int:
    status = service.get("/api/v1/vector-sync/status", headers=auth("admin")).json()
    count: int = status["indexed_documents"]
    return count


def gets(nc: NextcloudDialect, name: str) -> int:
    return sum(1 for r in nc.log.snapshot() if r.method == "GET" and r.path.endswith(name))


def test_a_new_file_is_searchable_with_its_nextcloud_identity(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "Documents/Reports/q3.txt", b"the quarterly harvest of lanterns")
    assert connect(service, nc, ALICE)["user_id"] == ALICE  # logs in as alice@example.org
    (hit,) = found(service, "lanterns", ALICE)
    fileid = str(nc.fileid(ALICE, "Documents/Reports/q3.txt"))
    assert (hit["doc_type"], hit["doc_id"]) == ("file", fileid)
    assert hit["file_path"] == "/Documents/Reports/q3.txt"
    assert hit["url"] == f"{nc.url}/f/{fileid}"
    assert found(service, "lanterns", CAROL) == []


def test_an_edit_replaces_and_a_delete_removes(service: TestClient, nc: NextcloudDialect) -> None:
    nc.put(ALICE, "a.txt", b"first words about marmalade")
    nc.put(ALICE, "keep.txt", b"the folder does not end up empty")
    connect(service, nc, ALICE)
    nc.put(ALICE, "a.txt", b"second words about porcelain")
    settle(service, ALICE)
    assert found(service, "marmalade", ALICE) == []
    assert len(found(service, "porcelain", ALICE)) == 1
    nc.delete(ALICE, "a.txt")
    settle(service, ALICE)
    assert found(service, "porcelain", ALICE) == []


def test_a_move_keeps_the_document_and_changes_its_path_without_a_download(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "Inbox/deep/plan.txt", b"the migration plan for the orchard")
    connect(service, nc, ALICE)
    downloads = gets(nc, "plan.txt")
    nc.move(ALICE, "Inbox/deep", "Archive/2026/deep")
    nc.move(ALICE, "Archive/2026/deep/plan.txt", "Archive/2026/deep/orchard-plan.txt")
    settle(service, ALICE)
    (hit,) = found(service, "orchard", ALICE)
    assert hit["file_path"] == "/Archive/2026/deep/orchard-plan.txt"
    assert hit["title"] == "orchard-plan.txt"
    assert hit["doc_id"] == str(nc.fileid(ALICE, "Archive/2026/deep/orchard-plan.txt"))
    assert gets(nc, "plan.txt") == downloads  # relabelled, not read again


def test_a_folder_shared_with_a_group_reaches_its_members_only_until_unshared(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "Team/specs/engine.txt", b"the turbine specification")
    nc.put(ALICE, "Private/diary.txt", b"the turbine in my dreams")
    connect(service, nc, ALICE)
    share = nc.share(ALICE, "Team", SHARE_GROUP, "staff")
    nc.share(ALICE, "Private", SHARE_LINK)  # a link grants no account
    settle(service, ALICE)
    (hit,) = found(service, "turbine", BOB, groups=["staff"])
    assert hit["file_path"] == "/Team/specs/engine.txt"
    assert found(service, "turbine", CAROL, groups=["admin"]) == []
    nc.unshare(share)
    settle(service, ALICE)
    assert found(service, "turbine", BOB, groups=["staff"]) == []
    assert len(found(service, "turbine", ALICE)) == 2


def test_a_file_two_connected_users_see_is_one_document_with_both_readers(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "Shared/minutes.txt", b"minutes of the harbour meeting")
    nc.share(ALICE, "Shared/minutes.txt", SHARE_USER, BOB)
    connect(service, nc, ALICE)
    connect(service, nc, BOB)
    alice_hits, bob_hits = found(service, "harbour", ALICE), found(service, "harbour", BOB)
    assert len(alice_hits) == len(bob_hits) == 1
    assert alice_hits[0]["doc_id"] == bob_hits[0]["doc_id"]
    assert alice_hits[0]["file_path"] == "/Shared/minutes.txt"  # the owner's view
    record = service.get(
        f"/api/v1/documents/file/{alice_hits[0]['doc_id']}", headers=auth(ALICE)
    ).json()
    assert record["status"] == "indexed"


def test_an_empty_multistatus_deletes_nothing(service: TestClient, nc: NextcloudDialect) -> None:
    nc.put(ALICE, "Projects/x/a.txt", b"the silver compass")
    nc.put(ALICE, "Projects/b.txt", b"the silver anchor")
    connect(service, nc, ALICE)
    nc.put(ALICE, "Projects/c.txt", b"a change below: Projects is listed")
    nc.fault(
        "empty_207",
        method="PROPFIND",
        path_prefix=nc.dav_url(ALICE, "Projects")[len(nc.url) :],
        times=None,
    )
    settle(service, ALICE)
    assert len(found(service, "silver", ALICE)) == 2
    assert users(service)[ALICE]["state"] != "ok"  # the walk knows it did not go through
    nc.clear_faults()
    settle(service, ALICE)
    assert len(found(service, "silver", ALICE)) == 2
    assert users(service)[ALICE]["state"] == "ok"


def test_a_folder_listing_empty_is_believed_only_the_second_time(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "Projects/a.txt", b"the golden compass")
    nc.put(ALICE, "Projects/b.txt", b"the golden anchor")
    connect(service, nc, ALICE)
    nc.delete(ALICE, "Projects/a.txt")
    nc.delete(ALICE, "Projects/b.txt")
    settle(service, ALICE)
    assert indexed_documents(service) == 2  # held back once (searches hide them: verified)
    settle(service, ALICE)
    assert indexed_documents(service) == 0
    assert users(service)[ALICE]["state"] == "ok"


def test_a_revoked_app_password_stops_that_user_only(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "a.txt", b"alpha file of alice")
    nc.put(CAROL, "c.txt", b"alpha file of carol")
    password = nc.app_password(ALICE)
    connect(service, nc, ALICE, password)
    connect(service, nc, CAROL)
    nc.revoke(password)
    nc.put(ALICE, "a2.txt", b"beta file of alice")
    nc.put(CAROL, "c2.txt", b"beta file of carol")
    settle(service, ALICE)
    settle(service, CAROL)
    assert users(service)[ALICE]["state"] == "revoked"
    assert found(service, "beta", ALICE) == []
    assert len(found(service, "beta", CAROL)) == 1
    assert users(service)[CAROL]["state"] == "ok"


def test_a_huge_file_is_skipped_before_any_download(
    service: TestClient, nc: NextcloudDialect
) -> None:
    node = nc.put(ALICE, "Videos/huge.txt", b"small stand-in for a huge body")
    with nc.world.lock:
        node.size = 2 * 2**30  # what PROPFIND reports: 2 GiB
    connect(service, nc, ALICE)
    assert gets(nc, "huge.txt") == 0
    assert users(service)[ALICE]["skipped"] == {"too_large": 1}
    settle(service, ALICE)  # not tried again
    assert gets(nc, "huge.txt") == 0
    metrics = service.get("/metrics", headers=auth("admin")).text
    assert f'astrolabe_nextcloud_skipped_files{{reason="too_large",user="{ALICE}"}} 1.0' in metrics
    assert 'astrolabe_nextcloud_requests_total{status="207"}' in metrics
    assert 'astrolabe_nextcloud_users{state="ok"} 1.0' in metrics


def test_an_idle_tick_is_one_request(service: TestClient, nc: NextcloudDialect) -> None:
    for i in range(5):
        nc.put(ALICE, f"Folder{i}/sub/file{i}.txt", f"content number {i}".encode())
    connect(service, nc, ALICE)
    settle(service, ALICE)  # forced: the share lists and apps are read too
    nc.reset_log()
    before = users(service)[ALICE]["last_tick"]
    nc.world.clock.advance(1)
    ordinary_tick(service, ALICE)
    assert users(service)[ALICE]["last_tick"] != before
    assert [(r.method, r.depth) for r in nc.log.snapshot()] == [("PROPFIND", "0")]


def test_webhooks_need_the_secret_and_a_known_user(
    service: TestClient, nc: NextcloudDialect
) -> None:
    connect(service, nc, ALICE)
    envelope: dict[str, Any] = {
        "event": {
            "class": "OCP\\Files\\Events\\Node\\NodeCreatedEvent",
            "node": {"id": 1, "path": f"/{ALICE}/files/a.txt"},
        },
        "user": {"uid": ALICE},
        "time": 1,
    }
    assert service.post("/webhooks/nextcloud", json=envelope).status_code == 401
    wrong = {"Authorization": "Bearer not-the-secret-at-all"}
    assert service.post("/webhooks/nextcloud", json=envelope, headers=wrong).status_code == 401
    good = {"Authorization": f"Bearer {WEBHOOK_SECRET}"}
    assert service.post("/webhooks/nextcloud", content=b"{nope", headers=good).status_code == 400
    stranger = {
        **envelope,
        "user": {"uid": "mallory"},
        "event": {**envelope["event"], "node": {"id": 99, "path": "/mallory/files/x"}},
    }
    assert service.post("/webhooks/nextcloud", json=stranger, headers=good).json() == {
        "ignored": True
    }
    other = {"event": {"class": "OCP\\User\\Events\\UserLoggedInEvent"}, "user": {"uid": ALICE}}
    assert service.post("/webhooks/nextcloud", json=other, headers=good).json() == {"ignored": True}
    assert service.post("/webhooks/nextcloud", json=envelope, headers=good).json() == {"queued": 1}


def deliver(service: TestClient, envelope: dict[str, Any]) -> dict[str, Any]:
    response = service.post(
        "/webhooks/nextcloud",
        json=envelope,
        headers={"Authorization": f"Bearer {WEBHOOK_SECRET}"},
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def captured(nc: NextcloudDialect) -> list[dict[str, Any]]:
    """The webhook envelopes the dialect emits from now on (as a registered listener gets)."""
    envelopes: list[dict[str, Any]] = []
    nc.world.listeners.append(lambda envelope: envelopes.append(dict(envelope)))
    return envelopes


def searchable_within(service: TestClient, query: str, user: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found(service, query, user):
            return True
        time.sleep(0.05)
    return False


def test_a_webhook_makes_a_change_searchable_before_the_next_poll(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "Projects/old.txt", b"an older file")
    connect(service, nc, ALICE)  # the next poll is an hour away
    envelopes = captured(nc)
    nc.put(ALICE, "Projects/deep/new.txt", b"the astrolabe of the harbour master")
    (created,) = [e for e in envelopes if e["event"]["class"].endswith("NodeCreatedEvent")][-1:]
    assert deliver(service, created) == {"queued": 1}
    assert searchable_within(service, "astrolabe", ALICE, seconds=5)


def test_a_tag_assigned_reaches_the_index_through_its_webhook(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "Invoices/march.txt", b"invoice for the lighthouse repairs")
    connect(service, nc, ALICE)
    envelopes = captured(nc)
    nc.tag(ALICE, "Invoices/march.txt", "finance")  # changes no ETag, as in Nextcloud
    (assigned,) = envelopes
    assert deliver(service, assigned) == {"queued": 1}
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        hits = found(service, "lighthouse", ALICE, tags=["finance"])
        if hits:
            break
        time.sleep(0.05)
    assert [h["tags"] for h in hits] == [["finance"]]


def test_rate_limiting_is_waited_out(service: TestClient, nc: NextcloudDialect) -> None:
    nc.put(ALICE, "Notes/Work/standup.md", b"# Standup\n\nthe kettle is broken again")
    nc.fault("status", method="PROPFIND", status=429, retry_after=1, times=2)
    connect(service, nc, ALICE)
    (hit,) = found(service, "kettle", ALICE)
    assert (hit["doc_type"], hit["category"]) == ("note", "Work")
    statuses = [r.status for r in nc.log.snapshot() if r.method == "PROPFIND"]
    assert statuses.count(429) == 2 and users(service)[ALICE]["state"] == "ok"


def test_disconnecting_a_user_removes_what_only_they_saw(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "Shared/plan.txt", b"the shared voyage plan")
    nc.put(BOB, "mine.txt", b"the private voyage diary")
    nc.share(ALICE, "Shared/plan.txt", SHARE_USER, BOB)
    connect(service, nc, ALICE)
    connect(service, nc, BOB)
    assert len(found(service, "voyage", BOB)) == 2
    response = service.delete(f"/api/v1/nextcloud/users/{BOB}", headers=auth("admin"))
    assert response.status_code == 204
    assert [h["file_path"] for h in found(service, "voyage", ALICE)] == ["/Shared/plan.txt"]
    assert found(service, "diary", BOB) == []
    assert BOB not in users(service)
    missing = service.delete(f"/api/v1/nextcloud/users/{BOB}", headers=auth("admin"))
    assert missing.status_code == 404


def test_hits_are_verified_against_nextcloud_itself_as_the_searching_user(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "Reports/kept.txt", b"the cobalt report that stays")
    nc.put(ALICE, "Reports/gone.txt", b"the cobalt report deleted meanwhile")
    connect(service, nc, ALICE)
    nc.delete(ALICE, "Reports/gone.txt")  # no tick yet: the index still holds it
    response = service.post(
        "/api/v1/search", json={"query": "cobalt", "algorithm": "bm25"}, headers=auth(ALICE)
    ).json()
    assert [h["file_path"] for h in response["results"]] == ["/Reports/kept.txt"]
    assert response["verification"] == "ok"
    searches = [r for r in nc.log.snapshot() if r.method == "SEARCH"]
    assert len(searches) == 1 and searches[0].user == ALICE


def test_verify_keeps_one_connection_per_user_until_the_password_changes(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "Reports/kept.txt", b"the cobalt report that stays")
    connect(service, nc, ALICE)
    body = {"query": "cobalt", "algorithm": "bm25"}
    for _ in range(3):
        response = service.post("/api/v1/search", json=body, headers=auth(ALICE)).json()
        assert response["verification"] == "ok" and len(response["results"]) == 1
    searches = [r for r in nc.log.snapshot() if r.method == "SEARCH"]
    assert len(searches) == 3 and len({r.peer for r in searches}) == 1  # no handshake a search

    nc.log.reset()
    connect(service, nc, ALICE)  # a new app password: the kept client is replaced
    response = service.post("/api/v1/search", json=body, headers=auth(ALICE)).json()
    assert response["verification"] == "ok" and len(response["results"]) == 1
    (search,) = [r for r in nc.log.snapshot() if r.method == "SEARCH"]
    assert search.peer not in {r.peer for r in searches}


def test_deck_cards_and_calendar_events_are_indexed_with_their_readers(
    service: TestClient, nc: NextcloudDialect
) -> None:
    board = nc.deck.add_board(ALICE, "Roadmap")
    nc.deck.share_board(board.id, "staff", type=1)
    label = nc.deck.add_label(board.id, "Urgent")
    stack = nc.deck.add_stack(board.id, "To do")
    nc.deck.add_card(stack.id, "Paint the lighthouse", "red and white", labels=(label.id,))
    calendar = nc.caldav.add_calendar(ALICE, "work", displayname="Work")
    nc.caldav.put_event(
        calendar, "e.ics", vevent("e1", "Lighthouse inspection", "20260105T090000Z")
    )
    connect(service, nc, ALICE)
    card = found(service, "lighthouse", BOB, groups=["staff"])
    assert [(h["doc_type"], h["tags"], h["category"]) for h in card] == [
        ("deck_card", ["Urgent"], "Roadmap")
    ]
    mine = {h["doc_type"] for h in found(service, "lighthouse", ALICE)}
    assert mine == {"deck_card", "event"}
    assert found(service, "lighthouse", CAROL, groups=["admin"]) == []
    nc.deck.add_card(stack.id, "Repair the lighthouse lamp")
    envelopes = captured(nc)
    nc.deck.add_card(stack.id, "Order lighthouse paint")
    deck_events = [e for e in envelopes if "Deck" in e["event"]["class"]]
    assert deck_events and deliver(service, deck_events[-1]) == {"queued": 1}
    deadline = time.monotonic() + 5
    while len(found(service, "lighthouse", BOB, groups=["staff"])) < 3:
        assert time.monotonic() < deadline, "the Deck webhook did not bring the new cards"
        time.sleep(0.05)


def test_a_change_deep_in_the_tree_costs_depth_plus_two_requests(
    service: TestClient, nc: NextcloudDialect
) -> None:
    for i in range(4):
        nc.put(ALICE, f"Side{i}/x/y.txt", f"side file {i}".encode())
    nc.put(ALICE, "a/b/c/deep.txt", b"the first version")
    connect(service, nc, ALICE)
    nc.put(ALICE, "a/b/c/deep.txt", b"the second version of the deep file")
    nc.reset_log()
    ordinary_tick(service, ALICE)
    sent = [
        (r.method, r.path.removeprefix(f"/remote.php/dav/files/{ALICE}")) for r in nc.log.snapshot()
    ]
    assert sent == [
        ("PROPFIND", "/"),
        ("PROPFIND", "/"),
        ("PROPFIND", "/a/"),
        ("PROPFIND", "/a/b/"),
        ("PROPFIND", "/a/b/c/"),
        ("GET", "/a/b/c/deep.txt"),
    ]  # 4 segments deep: 6 requests; no Side folder listed
    settle(service, ALICE)
    assert len(found(service, "second", ALICE)) == 1


def test_a_group_share_received_by_a_connected_member_reaches_the_whole_group(
    service: TestClient, nc: NextcloudDialect
) -> None:
    nc.add_user("dave", groups=("staff",))
    nc.put(ALICE, "Team/charter.txt", b"the team charter of the observatory")
    connect(service, nc, BOB)  # alice, the owner, is not connected
    nc.share(ALICE, "Team", SHARE_GROUP, "staff")
    ordinary_tick(service, BOB)  # not forced: the new mount in bob's root says to read shares
    deadline = time.monotonic() + 10
    while not found(service, "observatory", "dave", groups=["staff"]):
        assert time.monotonic() < deadline, "the group share did not reach dave"
        time.sleep(0.05)
    assert found(service, "observatory", CAROL, groups=["admin"]) == []


def test_a_user_has_one_sync_whoever_starts_it(service: TestClient, nc: NextcloudDialect) -> None:
    """`connect` and the watch that adopts the ledger's users can both start bob's sync: the
    second finds the first running and wakes it."""
    connect(service, nc, BOB)
    connector = connector_of(service)
    runner = connector._runners[BOB]
    connector._run(BOB)  # the watch, having read the ledger before `connect` started bob's
    assert connector._runners[BOB] is runner and not runner.stop.is_set()
    assert [t.name for t in threading.enumerate()].count(f"nextcloud-{BOB}") == 1


def test_a_changed_secret_key_fails_the_users_it_cannot_read(
    tmp_path: Path, nc: NextcloudDialect
) -> None:
    nc.put(ALICE, "a.txt", b"the sealed file")
    with connected_service(tmp_path / "data", nc) as first:
        connect(first, nc, ALICE)
    other = "a-different-secret-key-0123456789"
    with connected_service(tmp_path / "data", nc, secret_key=other) as service:
        deadline = time.monotonic() + 10
        while users(service)[ALICE]["state"] != "failing" and time.monotonic() < deadline:
            time.sleep(0.05)
        line = users(service)[ALICE]
        assert (line["state"], line["last_error"]) == ("failing", "SEARCH_SECRET_KEY changed")
