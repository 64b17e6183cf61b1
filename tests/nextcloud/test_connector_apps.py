"""app.nextcloud.apps: Deck cards and calendar events as documents, against the Nextcloud
dialect and a real Radicale."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from app.ingest.documents import Document
from app.nextcloud.apps import calendar_documents, deck_documents
from app.nextcloud.client import NextcloudClient
from app.nextcloud.errors import AppMissing, Revoked
from tests.nextcloud.caldav import vevent
from tests.nextcloud.conftest import ALICE, BOB, CAROL
from tests.nextcloud.realdav import RealDav
from tests.nextcloud.server import NextcloudDialect

T0 = 1_780_000_000


@contextmanager
def connect(
    nc: NextcloudDialect, uid: str, password: str | None = None
) -> Iterator[NextcloudClient]:
    login = nc.world.users[uid].login
    client = NextcloudClient(nc.url, login, password or nc.app_password(uid), sleep=lambda _: None)
    try:
        yield client
    finally:
        client.close()


def by_id(docs: list[Document]) -> dict[str, Document]:
    assert len({d.doc_id for d in docs}) == len(docs)
    return {d.doc_id: d for d in docs}


def ics(uid: str, summary: str, *lines: str) -> str:
    body = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//Astrolabe//tests//EN",
        "BEGIN:VEVENT",
        f"UID:{uid}",
        "DTSTAMP:20260101T000000Z",
        f"SUMMARY:{summary}",
        *lines,
        "END:VEVENT",
        "END:VCALENDAR",
        "",
    ]
    return "\r\n".join(body)


# Deck -----------------------------------------------------------------------------------


def test_deck_cards_with_labels_and_a_board_shared_with_a_group(nc: NextcloudDialect) -> None:
    board = nc.deck.add_board(ALICE, "Roadmap")
    nc.deck.share_board(board.id, "staff", type=1)
    nc.deck.share_board(board.id, CAROL, type=0, edit=True)
    finished, urgent = (
        nc.deck.add_label(board.id, "Finished"),
        nc.deck.add_label(board.id, "Urgent"),
    )
    stack = nc.deck.add_stack(board.id, "To do")
    nc.world.clock.advance(100)
    card = nc.deck.add_card(
        stack.id, "Write the connector", "It **pulls**.", labels=(finished.id, urgent.id)
    )
    nc.world.clock.advance(50)
    plain = nc.deck.add_card(nc.deck.add_stack(board.id, "Done").id, "Second card")
    private = nc.deck.add_board(CAROL, "Carol's own")  # not shared with bob
    nc.deck.add_card(nc.deck.add_stack(private.id, "S").id, "Carol's card")
    gone = nc.deck.add_board(ALICE, "Deleted board")
    nc.deck.share_board(gone.id, BOB)
    nc.deck.add_card(nc.deck.add_stack(gone.id, "S").id, "In a deleted board")
    nc.deck.delete_board(gone.id)
    with connect(nc, BOB) as client:
        docs = by_id(deck_documents(client, BOB))
    assert set(docs) == {str(card.id), str(plain.id)}
    doc = docs[str(card.id)]
    assert doc == Document(
        doc_type="deck_card",
        doc_id=str(card.id),
        title="Write the connector",
        content="It **pulls**.",
        owner=ALICE,
        modified_at=T0 + 100,
        file_path=None,
        tags=("Finished", "Urgent"),
        category="Roadmap",
        mime_type=None,
        acl=("group:staff", f"user:{CAROL}"),
        url=f"{nc.url}/index.php/apps/deck/card/{card.id}",
    )
    second = docs[str(plain.id)]
    assert second.tags == () and second.modified_at == T0 + 150 and second.content == ""
    assert second.acl == doc.acl and second.owner == ALICE


def test_archived_and_deleted_cards_are_absent(nc: NextcloudDialect) -> None:
    board = nc.deck.add_board(ALICE, "B")
    stack = nc.deck.add_stack(board.id, "S")
    kept = nc.deck.add_card(stack.id, "kept")
    archived = nc.deck.add_card(stack.id, "archived")
    deleted = nc.deck.add_card(stack.id, "deleted")
    nc.deck.update_card(archived.id, archived=True)
    nc.deck.delete_card(deleted.id)
    with connect(nc, ALICE) as client:
        docs = deck_documents(client, ALICE)
    assert [d.doc_id for d in docs] == [str(kept.id)]
    assert docs[0].acl == ()  # not shared: the owner alone


def test_one_board_failing_does_not_sink_the_others(nc: NextcloudDialect) -> None:
    good, bad = nc.deck.add_board(ALICE, "Good"), nc.deck.add_board(ALICE, "Bad")
    card = nc.deck.add_card(nc.deck.add_stack(good.id, "S").id, "survives")
    nc.deck.add_card(nc.deck.add_stack(bad.id, "S").id, "lost")
    nc.fault("not_found", path_prefix=f"/index.php/apps/deck/api/v1.0/boards/{bad.id}/")
    with connect(nc, ALICE) as client:
        docs = deck_documents(client, ALICE)
    assert [(d.doc_id, d.title) for d in docs] == [(str(card.id), "survives")]


def test_deck_not_installed_is_app_missing(nc: NextcloudDialect) -> None:
    nc.deck.add_board(ALICE, "B")
    nc.deck.installed = False
    with connect(nc, ALICE) as client, pytest.raises(AppMissing):
        deck_documents(client, ALICE)


# Calendar ---------------------------------------------------------------------------------


def test_calendar_events_with_the_calendar_share_as_acl(nc: NextcloudDialect) -> None:
    team = nc.caldav.add_calendar(ALICE, "team", "Team")
    nc.caldav.share(team, "principals/groups/staff", read_only=False)
    nc.caldav.share(team, f"principals/users/{CAROL}")
    kickoff = ics(
        "kick-off-1",
        "Kick-off",
        "DTSTART:20260105T090000Z",
        "LAST-MODIFIED:20260102T080000Z",
        "DESCRIPTION:Plan the quarter\\, then lunch",
        "LOCATION:Room 4",
    )
    nc.caldav.put_event(team, "kick.ics", kickoff)
    recurring = ics("weekly", "Standup", "DTSTART;VALUE=DATE:20260106", "RRULE:FREQ=WEEKLY")
    nc.caldav.put_event(team, "weekly.ics", _override_first(recurring))
    tasks = nc.caldav.add_calendar(ALICE, "tasks", "Tasks", components=("VTODO",))
    nc.caldav.put_event(tasks, "t.ics", vevent("in-a-task-list", "Hidden", "20260105T090000Z"))
    with connect(nc, ALICE) as client:
        docs = by_id(calendar_documents(client, ALICE))
    assert set(docs) == {f"{ALICE}/team/kick-off-1", f"{ALICE}/team/weekly"}
    dav_path = f"/remote.php/dav/calendars/{ALICE}/team/kick.ics"
    assert docs[f"{ALICE}/team/kick-off-1"] == Document(
        doc_type="event",
        doc_id=f"{ALICE}/team/kick-off-1",
        title="Kick-off",
        content="Plan the quarter, then lunch\nRoom 4\n2026-01-05 09:00 UTC",
        owner=ALICE,
        modified_at=1_767_340_800,  # 2026-01-02T08:00:00Z
        file_path=None,
        tags=(),
        category="Team",
        mime_type=None,
        acl=("group:staff", f"user:{CAROL}"),
        url=f"{nc.url}/index.php/apps/calendar/edit/{base64.b64encode(dav_path.encode()).decode()}",
    )
    weekly = docs[f"{ALICE}/team/weekly"]
    assert weekly.title == "Standup"  # the master, not the moved instance
    assert weekly.content == "2026-01-06" and weekly.modified_at == 1_767_225_600  # DTSTAMP
    # bob reads the same calendar through "staff": the same documents, owned by alice
    with connect(nc, BOB) as client:
        seen = by_id(calendar_documents(client, BOB))
    assert set(seen) == set(docs)
    shared = seen[f"{ALICE}/team/kick-off-1"]
    assert shared.owner == ALICE and shared.category == "Team"
    assert f"user:{BOB}" in shared.acl and shared.title == "Kick-off"


def _override_first(master: str) -> str:
    """The recurring event with a moved instance written before its master."""
    moved = (
        "BEGIN:VEVENT\r\nUID:weekly\r\nDTSTAMP:20260101T000000Z\r\n"
        "RECURRENCE-ID;VALUE=DATE:20260113\r\nDTSTART;VALUE=DATE:20260114\r\n"
        "SUMMARY:Standup moved\r\nEND:VEVENT\r\n"
    )
    head, sep, tail = master.partition("BEGIN:VEVENT\r\n")
    return head + moved + sep + tail


def test_a_broken_vevent_is_skipped_and_the_others_come_back(nc: NextcloudDialect) -> None:
    cal = nc.caldav.add_calendar(ALICE, "personal", "Personal")
    nc.caldav.put_event(cal, "good.ics", vevent("good", "Good", "20260105T090000Z"))
    # one object, two VEVENTs: the first's DTSTART is not a date, the second is fine
    bad = ics("bad-date", "Bad date", "DTSTART:notadate")
    fine = ics("fine", "Fine neighbour", "DTSTART:20260107T100000Z")
    two = bad.replace("END:VCALENDAR\r\n", fine.partition("PRODID:-//Astrolabe//tests//EN\r\n")[2])
    nc.caldav.put_event(cal, "two.ics", two)
    nc.caldav.put_event(cal, "garbage.ics", "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\n")
    lost = nc.caldav.add_calendar(ALICE, "lost", "Lost")  # its REPORT fails: it alone is skipped
    nc.caldav.put_event(lost, "l.ics", vevent("lost", "Lost", "20260105T090000Z"))
    nc.fault(
        "status",
        method="REPORT",
        path_prefix=f"/remote.php/dav/calendars/{ALICE}/lost/",
        status=415,
    )
    with connect(nc, ALICE) as client:
        docs = by_id(calendar_documents(client, ALICE))
    assert set(docs) == {f"{ALICE}/personal/good", f"{ALICE}/personal/fine"}
    assert docs[f"{ALICE}/personal/fine"].title == "Fine neighbour"


def test_calendar_not_available_is_app_missing(nc: NextcloudDialect) -> None:
    nc.caldav.add_calendar(ALICE, "personal")
    nc.caldav.installed = False
    with connect(nc, ALICE) as client, pytest.raises(AppMissing):
        calendar_documents(client, ALICE)


def test_events_from_a_real_radicale(radicale: RealDav) -> None:
    user = radicale.user
    mkcalendar = (
        '<?xml version="1.0"?><d:mkcol xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
        "<d:set><d:prop><d:resourcetype><d:collection/><c:calendar/></d:resourcetype>"
        "<d:displayname>Work</d:displayname></d:prop></d:set></d:mkcol>"
    )
    with httpx.Client(base_url=radicale.url, auth=(user, radicale.password)) as c:
        assert c.request("MKCOL", f"/{user}/work/", content=mkcalendar).status_code == 201
        for name, body in {
            "e1": vevent("e1", "Kick-off", "20260105T090000Z", description="First day"),
            "e2": ics("e2", "Review", "DTSTART;VALUE=DATE:20260106"),
        }.items():
            put = c.put(
                f"/{user}/work/{name}.ics", content=body, headers={"Content-Type": "text/calendar"}
            )
            assert put.status_code == 201, put.text
    client = NextcloudClient(radicale.url, user, radicale.password, sleep=lambda _: None)
    try:
        docs = by_id(calendar_documents(client, user, dav_root="/"))
    finally:
        client.close()
    assert set(docs) == {f"{user}/work/e1", f"{user}/work/e2"}
    e1 = docs[f"{user}/work/e1"]
    assert (e1.title, e1.owner, e1.category, e1.acl) == ("Kick-off", user, "Work", ())
    assert e1.content == "First day\n2026-01-05 09:00 UTC"
    assert e1.modified_at == 1_767_603_600  # DTSTAMP 2026-01-05T09:00:00Z
    assert e1.url == f"{radicale.url}/{user}/work/e1.ics"
    assert docs[f"{user}/work/e2"].content == "2026-01-06"


# Revoked ----------------------------------------------------------------------------------


def test_a_revoked_app_password_raises_revoked(nc: NextcloudDialect) -> None:
    nc.deck.add_board(ALICE, "B")
    nc.caldav.add_calendar(ALICE, "personal")
    password = nc.app_password(ALICE)
    nc.revoke(password)
    with connect(nc, ALICE, password) as client:
        with pytest.raises(Revoked):
            deck_documents(client, ALICE)
        with pytest.raises(Revoked):
            calendar_documents(client, ALICE)
