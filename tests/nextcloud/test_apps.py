"""The dialect's Deck, CalDAV and webhook_listeners parts."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from tests.nextcloud.caldav import vevent
from tests.nextcloud.conftest import ALICE, BOB, CAROL, client
from tests.nextcloud.server import NextcloudDialect
from tests.nextcloud.xmlread import CAL, CS, OC, D, by_href, multistatus, propfind

OCS = {"OCS-APIRequest": "true"}
DECK = "/index.php/apps/deck/api/v1.0"
Received = queue.Queue[tuple[dict[str, str], bytes]]


# Deck -----------------------------------------------------------------------------------


def _deck(nc: NextcloudDialect) -> tuple[int, int, int]:
    board = nc.deck.add_board(ALICE, "Roadmap", "ff0000")
    nc.deck.share_board(board.id, "staff", type=1)
    label = nc.deck.add_label(board.id, "Finished")
    stack = nc.deck.add_stack(board.id, "To do", order=1)
    card = nc.deck.add_card(stack.id, "Write the connector", "It **pulls**.", labels=(label.id,))
    nc.deck.add_card(stack.id, "Second card")
    return board.id, stack.id, card.id


def test_deck_boards_stacks_and_cards_as_documented(
    nc: NextcloudDialect, bob: httpx.Client
) -> None:
    board_id, stack_id, card_id = _deck(nc)
    [board] = bob.get(f"{DECK}/boards", headers=OCS).json()
    assert board["id"] == board_id and board["title"] == "Roadmap"
    assert board["owner"] == {"primaryKey": ALICE, "uid": ALICE, "displayname": "Alice A."}
    assert board["acl"][0]["participant"]["uid"] == "staff" and board["acl"][0]["type"] == 1
    assert board["permissions"]["PERMISSION_READ"] is True
    assert board["permissions"]["PERMISSION_EDIT"] is False
    assert [lb["title"] for lb in board["labels"]] == ["Finished"]
    assert "stacks" not in board
    [detailed] = bob.get(f"{DECK}/boards", params={"details": "true"}, headers=OCS).json()
    assert [s["title"] for s in detailed["stacks"]] == ["To do"]
    stacks = bob.get(f"{DECK}/boards/{board_id}/stacks", headers=OCS)
    [stack] = stacks.json()
    assert stack["id"] == stack_id and stack["boardId"] == board_id
    card = stack["cards"][0]
    assert card["id"] == card_id and card["title"] == "Write the connector"
    assert card["description"] == "It **pulls**." and card["stackId"] == stack_id
    assert card["owner"] == ALICE and card["labels"][0]["title"] == "Finished"
    assert {"lastModified", "createdAt", "duedate", "archived", "deletedAt", "ETag"} <= set(card)
    one = bob.get(f"{DECK}/boards/{board_id}/stacks/{stack_id}/cards/{card_id}", headers=OCS)
    assert one.json()["ETag"] == card["ETag"]
    assert one.headers["etag"] == f'"{card["ETag"]}"'


def test_deck_etags_if_none_match_and_if_modified_since(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    board_id, _, card_id = _deck(nc)
    other = nc.deck.add_board(ALICE, "Untouched")
    url = f"{DECK}/boards/{board_id}"
    etag = alice.get(url, headers=OCS).headers["etag"]
    assert alice.get(url, headers={**OCS, "If-None-Match": etag}).status_code == 304
    since = nc.world.clock.advance(60)
    nc.world.clock.advance(1)
    nc.deck.update_card(card_id, title="Renamed")  # a child's change reaches the board
    changed = alice.get(url, headers={**OCS, "If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    fresh = alice.get(
        f"{DECK}/boards", headers={**OCS, "If-Modified-Since": formatdate(since, usegmt=True)}
    )
    assert [b["id"] for b in fresh.json()] == [board_id]
    assert other.id in [b["id"] for b in alice.get(f"{DECK}/boards", headers=OCS).json()]


def test_deck_access_archive_delete_ocs_and_absence(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    board_id, stack_id, card_id = _deck(nc)
    with client(nc, CAROL) as carol:
        assert carol.get(f"{DECK}/boards", headers=OCS).json() == []
        denied = carol.get(f"{DECK}/boards/{board_id}", headers=OCS)
        assert denied.status_code == 403
        assert denied.json() == {"status": 403, "message": "Permission denied"}
    nc.deck.update_card(card_id, archived=True)
    live = alice.get(f"{DECK}/boards/{board_id}/stacks", headers=OCS).json()
    archived = alice.get(f"{DECK}/boards/{board_id}/stacks/archived", headers=OCS).json()
    assert [c["title"] for c in live[0]["cards"]] == ["Second card"]
    assert [c["id"] for c in archived[0]["cards"]] == [card_id]
    second = live[0]["cards"][0]["id"]
    nc.deck.delete_card(second)
    assert alice.get(f"{DECK}/boards/{board_id}/stacks", headers=OCS).json()[0]["cards"] == []
    card_url = f"{DECK}/boards/{board_id}/stacks/{stack_id}/cards/{second}"
    assert alice.get(card_url, headers=OCS).status_code == 404
    wrapped = alice.get(
        f"/ocs/v2.php/apps/deck/api/v1.0/boards/{board_id}", params={"format": "json"}, headers=OCS
    ).json()
    assert wrapped["ocs"]["meta"]["statuscode"] == 200
    assert wrapped["ocs"]["data"]["id"] == board_id
    nc.deck.installed = False
    assert alice.get(f"{DECK}/boards", headers=OCS).status_code == 404
    assert alice.get("/ocs/v2.php/apps/deck/api/v1.0/boards", headers=OCS).status_code == 404


# CalDAV ---------------------------------------------------------------------------------


def test_caldav_home_lists_calendars_with_ctag_and_sync_token(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    cal = nc.caldav.add_calendar(ALICE, "personal", "Personal")
    home = f"/remote.php/dav/calendars/{ALICE}/"
    names = (f"{D}resourcetype", f"{D}displayname", f"{CS}getctag", f"{D}sync-token")
    entries = by_href(propfind(alice, home, "1", *names))
    assert set(entries) == {
        home,
        home + "personal/",
        home + "inbox/",
        home + "outbox/",
        home + "trashbin/",
    }
    calendars = [
        h
        for h, e in entries.items()
        if e.found[f"{D}resourcetype"].find(f"{CAL}calendar") is not None
    ]
    assert calendars == [home + "personal/"]
    personal = entries[home + "personal/"]
    assert personal.text(f"{D}displayname") == "Personal"
    ctag = personal.text(f"{CS}getctag")
    assert ctag.startswith("http://sabre.io/ns/sync/") and ctag == personal.text(f"{D}sync-token")
    nc.caldav.put_event(cal, "e1.ics", vevent("e1", "Kick-off", "20260105T090000Z"))
    after = by_href(propfind(alice, home, "1", f"{CS}getctag"))[home + "personal/"]
    assert after.text(f"{CS}getctag") != ctag


def test_caldav_reports_return_vevents_and_changes(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    cal = nc.caldav.add_calendar(ALICE, "personal")
    nc.caldav.put_event(cal, "e1.ics", vevent("e1", "Kick-off", "20260105T090000Z"))
    nc.caldav.put_event(cal, "e2.ics", vevent("e2", "Review", "20260106T090000Z"))
    url = f"/remote.php/dav/calendars/{ALICE}/personal/"
    query = (
        b'<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
        b"<d:prop><d:getetag/><c:calendar-data/></d:prop><c:filter>"
        b'<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"/></c:comp-filter>'
        b"</c:filter></c:calendar-query>"
    )
    resp = alice.request("REPORT", url, headers={"Depth": "1"}, content=query)
    assert resp.status_code == 207
    events = {e.href: e.text(f"{CAL}calendar-data") for e in multistatus(resp.content)}
    assert "SUMMARY:Kick-off" in events[url + "e1.ics"]
    assert events[url + "e2.ics"].startswith("BEGIN:VCALENDAR")

    def sync(token: str) -> tuple[list[tuple[str, str | None]], str]:
        body = (
            f'<d:sync-collection xmlns:d="DAV:"><d:sync-token>{token}</d:sync-token>'
            "<d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop>"
            "</d:sync-collection>"
        )
        r = alice.request("REPORT", url, content=body.encode())
        assert r.status_code == 207, r.text
        new = r.text.split("<d:sync-token>")[1].split("</d:sync-token>")[0]
        return [(e.href, e.status) for e in multistatus(r.content)], new

    everything, token = sync("")
    assert sorted(h for h, _ in everything) == [url + "e1.ics", url + "e2.ics"]
    assert sync(token) == ([], token)
    nc.caldav.put_event(cal, "e2.ics", vevent("e2", "Review moved", "20260107T090000Z"))
    nc.caldav.delete_event(cal, "e1.ics")
    changes, newer = sync(token)
    assert dict(changes) == {url + "e1.ics": "HTTP/1.1 404 Not Found", url + "e2.ics": None}
    assert newer != token
    bad = alice.request(
        "REPORT",
        url,
        content=b'<d:sync-collection xmlns:d="DAV:">'
        b"<d:sync-token>http://sabre.io/ns/sync/999</d:sync-token>"
        b"</d:sync-collection>",
    )
    assert bad.status_code == 403 and b"valid-sync-token" in bad.content
    ics = alice.get(url + "e2.ics")
    assert "SUMMARY:Review moved" in ics.text and ics.headers["etag"].startswith('"')


def test_caldav_shares_and_absence(
    nc: NextcloudDialect, alice: httpx.Client, bob: httpx.Client
) -> None:
    cal = nc.caldav.add_calendar(ALICE, "team", "Team")
    nc.caldav.share(cal, f"principals/users/{BOB}", read_only=True)
    bob_home = f"/remote.php/dav/calendars/{BOB}/"
    names = (f"{OC}owner-principal", f"{OC}read-only", f"{D}displayname")
    shared = by_href(propfind(bob, bob_home, "1", *names))[bob_home + f"team_shared_by_{ALICE}/"]
    assert shared.text(f"{OC}owner-principal") == f"principals/users/{ALICE}"
    assert shared.text(f"{OC}read-only") == "1"
    mine = propfind(alice, f"/remote.php/dav/calendars/{ALICE}/team/", "0", f"{OC}invite")[0]
    [user] = mine.found[f"{OC}invite"]
    assert user.findtext(f"{D}href") == f"principal:principals/users/{BOB}"
    assert user.find(f"{OC}access/{OC}read") is not None
    nc.caldav.installed = False
    assert alice.request("PROPFIND", f"/remote.php/dav/calendars/{ALICE}/").status_code == 404


# webhooks -------------------------------------------------------------------------------


@contextmanager
def receiver() -> Iterator[tuple[str, Received]]:
    """A listener's endpoint on loopback: every request's headers and body, in order."""
    got: Received = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            got.put(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", got
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_webhooks_registered_over_ocs_are_sent_by_the_jobs(nc: NextcloudDialect) -> None:
    api = "/ocs/v2.php/apps/webhook_listeners/api/v1/webhooks?format=json"
    created = "OCP\\Files\\Events\\Node\\NodeCreatedEvent"
    with receiver() as (url, got), client(nc, CAROL) as carol, client(nc, ALICE) as alice:
        body = {
            "httpMethod": "POST",
            "uri": url,
            "event": created,
            "authMethod": "header",
            "authData": {"Authorization": "Bearer s3cret"},
        }
        assert alice.post(api, json=body, headers=OCS).status_code == 403  # not an admin
        made = carol.post(api, json=body, headers=OCS).json()["ocs"]["data"]
        assert made["uri"] == url and made["event"] == created and made["authMethod"] == "header"
        assert [h["id"] for h in carol.get(api, headers=OCS).json()["ocs"]["data"]] == [made["id"]]
        node = nc.put(ALICE, "inbox/new.txt", b"hi")
        assert got.empty()  # sent by a background job, not at once
        assert nc.run_webhook_jobs() == [200, 200]  # the folder and the file
        deliveries = [got.get(timeout=5) for _ in range(2)]
        headers, raw = deliveries[1]
        assert headers["authorization"] == "Bearer s3cret"
        assert "content-type" not in headers  # WebhookCall sends the JSON without one
        envelope = json.loads(raw)
        assert envelope == {
            "event": {
                "class": created,
                "node": {"id": node.fileid, "path": f"/{ALICE}/files/inbox/new.txt"},
            },
            "user": {"uid": ALICE, "displayName": "Alice A."},
            "time": nc.world.clock.now(),
        }
        assert (
            carol.delete(api.replace("?", f"/{made['id']}?"), headers=OCS).json()["ocs"]["data"]
            is True
        )


def test_webhook_filters_and_other_events(nc: NextcloudDialect) -> None:
    written = "OCP\\Files\\Events\\Node\\NodeWrittenEvent"
    nc.put(ALICE, "Special/a.txt", b"1")
    nc.put(ALICE, "Other/b.txt", b"1")
    with receiver() as (url, got):
        nc.register_webhook(
            url,
            written,
            bearer="t0ken",
            event_filter={"event.node.path": r"/^\/.*\/files\/Special\//"},
        )
        nc.register_webhook(url, "OCP\\SystemTag\\TagAssignedEvent")
        nc.register_webhook(url, "OCA\\Deck\\Event\\CardUpdatedEvent", user_id_filter=BOB)
        nc.register_webhook(url, "OCP\\Files\\Events\\Node\\NodeRenamedEvent")
        nc.put(ALICE, "Special/a.txt", b"2")
        nc.put(ALICE, "Other/b.txt", b"2")
        tag = nc.tag(ALICE, "Other/b.txt", "urgent")
        board = nc.deck.add_board(ALICE, "B")
        card = nc.deck.add_card(nc.deck.add_stack(board.id, "S").id, "C")
        nc.deck.update_card(card.id, actor=ALICE, title="not bob")
        nc.deck.update_card(card.id, actor=BOB, title="by bob")
        nc.move(ALICE, "Other/b.txt", "Other/c.txt")
        assert nc.run_webhook_jobs() == [200] * 4
        events = [json.loads(got.get(timeout=5)[1])["event"] for _ in range(4)]
    assert events[0]["node"]["path"] == f"/{ALICE}/files/Special/a.txt"
    assert events[1] == {
        "class": "OCP\\SystemTag\\TagAssignedEvent",
        "objectType": "files",
        "objectIds": [str(nc.fileid(ALICE, "Other/c.txt"))],
        "tagIds": [tag.id],
    }
    assert events[2]["before"]["title"] == "not bob" and events[2]["after"]["title"] == "by bob"
    assert events[3]["source"] == {"path": f"/{ALICE}/files/Other/b.txt"}
    assert events[3]["target"]["id"] == nc.fileid(ALICE, "Other/c.txt")


def test_deliver_webhook_posts_one_envelope_with_a_bearer(nc: NextcloudDialect) -> None:
    envelope = nc.event(
        "OCP\\Files\\Events\\Node\\BeforeNodeDeletedEvent",
        ALICE,
        node={"id": 7, "path": f"/{ALICE}/files/x.txt"},
    )
    assert envelope["user"] == {"uid": ALICE, "displayName": "Alice A."}
    with receiver() as (url, got):
        assert nc.deliver_webhook(url, envelope, bearer="abc") == 200
        headers, body = got.get(timeout=5)
    assert headers["authorization"] == "Bearer abc" and json.loads(body) == envelope
    assert nc.deliver_webhook("http://127.0.0.1:9/closed", envelope) == 0
