"""What two real DAV servers answer: the behaviour the connector must also handle off Nextcloud."""

from __future__ import annotations

import os
from email.utils import formatdate

import httpx

from tests.nextcloud.caldav import vevent
from tests.nextcloud.realdav import RealDav
from tests.nextcloud.xmlread import CAL, CS, D, by_href, multistatus, propfind

ETAG, MODIFIED = f"{D}getetag", f"{D}getlastmodified"
MKCALENDAR = (
    b'<?xml version="1.0"?><d:mkcol xmlns:d="DAV:" '
    b'xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><d:resourcetype>'
    b"<d:collection/><c:calendar/></d:resourcetype></d:prop></d:set></d:mkcol>"
)


def test_wsgidav_lists_depth_1_but_folders_carry_no_etag_to_propagate(wsgidav: RealDav) -> None:
    root = wsgidav.root
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.txt").write_bytes(b"one")
    (root / "top.txt").write_bytes(b"t")
    old = 1_000_000_000
    for folder in (root, root / "a", root / "a" / "b"):
        os.utime(folder, (old, old))
    with httpx.Client(base_url=wsgidav.url, auth=(wsgidav.user, wsgidav.password)) as c:
        before = by_href(propfind(c, "/", "1", ETAG, MODIFIED, f"{D}resourcetype"))
        assert set(before) == {"/", "/a/", "/top.txt"}
        assert ETAG in before["/"].missing and ETAG in before["/a/"].missing
        assert before["/top.txt"].text(ETAG)
        assert before["/a/"].text(MODIFIED) == formatdate(old, usegmt=True)
        file_before = propfind(c, "/a/b/f.txt", "0", ETAG)[0].text(ETAG)
        assert c.put("/a/b/f.txt", content=b"two, and longer").status_code in (200, 204)
        after = by_href(propfind(c, "/", "1", ETAG, MODIFIED))
        # Nothing above the file moved: no ETag to change, the folders' mtimes untouched.
        assert after["/"].text(MODIFIED) == before["/"].text(MODIFIED)
        assert after["/a/"].text(MODIFIED) == formatdate(old, usegmt=True)
        assert propfind(c, "/a/b/f.txt", "0", ETAG)[0].text(ETAG) != file_before
        everything = by_href(propfind(c, "/", "infinity", ETAG))
        assert "/a/b/f.txt" in everything  # Depth infinity is answered in full
        with httpx.Client(base_url=wsgidav.url, auth=(wsgidav.user, "wrong")) as bad:
            assert bad.request("PROPFIND", "/").status_code == 401


def test_radicale_home_has_no_etag_each_calendar_has_ctag_and_sync_token(
    radicale: RealDav,
) -> None:
    user = radicale.user
    with httpx.Client(base_url=radicale.url, auth=(user, radicale.password)) as c:
        assert c.request("MKCOL", f"/{user}/work/", content=MKCALENDAR).status_code == 201
        names = (ETAG, f"{CS}getctag", f"{D}sync-token", f"{D}resourcetype")
        home = by_href(propfind(c, f"/{user}/", "1", *names))
        assert set(home) == {f"/{user}/", f"/{user}/work/"}
        assert {ETAG, f"{CS}getctag", f"{D}sync-token"} <= home[f"/{user}/"].missing
        work = home[f"/{user}/work/"]
        assert work.found[f"{D}resourcetype"].find(f"{CAL}calendar") is not None
        ctag, token = work.text(f"{CS}getctag"), work.text(f"{D}sync-token")
        assert work.text(ETAG) == ctag
        event = vevent("e1", "Kick-off", "20260105T090000Z").encode()
        put = c.put(
            f"/{user}/work/e1.ics", content=event, headers={"Content-Type": "text/calendar"}
        )
        assert put.status_code == 201
        after = by_href(propfind(c, f"/{user}/", "1", *names))
        assert after[f"/{user}/work/"].text(f"{CS}getctag") != ctag
        assert after[f"/{user}/work/"].text(f"{D}sync-token") != token
        assert ETAG in after[f"/{user}/"].missing  # still nothing on the home
        query = (
            b'<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
            b"<d:prop><d:getetag/><c:calendar-data/></d:prop><c:filter>"
            b'<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"/>'
            b"</c:comp-filter></c:filter></c:calendar-query>"
        )
        resp = c.request("REPORT", f"/{user}/work/", headers={"Depth": "1"}, content=query)
        [entry] = multistatus(resp.content)
        assert "SUMMARY:Kick-off" in entry.text(f"{CAL}calendar-data")
