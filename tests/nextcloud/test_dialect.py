"""The Nextcloud dialect's files, auth, shares, search, login flow, faults and request log."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.nextcloud.conftest import ALICE, ALICE_LOGIN, BOB, CAROL, client
from tests.nextcloud.dav import DepthInfinity
from tests.nextcloud.model import SHARE_GROUP, SHARE_LINK, SHARE_USER
from tests.nextcloud.server import NextcloudDialect
from tests.nextcloud.xmlread import NC, OC, D, by_href, multistatus, propfind

OCS = {"OCS-APIRequest": "true"}
ROOT = f"/remote.php/dav/files/{ALICE}/"
ETAG, FILEID = f"{D}getetag", f"{OC}fileid"


def etags(c: httpx.Client, url: str, depth: str = "1") -> dict[str, str]:
    return {e.href: e.text(ETAG) for e in propfind(c, url, depth, ETAG)}


# identity and auth ---------------------------------------------------------------------------


def test_principal_and_user_answer_the_uid_not_the_login(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    body = b'<d:propfind xmlns:d="DAV:"><d:prop><d:current-user-principal/></d:prop></d:propfind>'
    resp = alice.request("PROPFIND", "/remote.php/dav/", headers={"Depth": "0"}, content=body)
    [entry] = multistatus(resp.content)
    principal = entry.found[f"{D}current-user-principal"].findtext(f"{D}href")
    assert principal == f"/remote.php/dav/principals/users/{ALICE}/"

    user = alice.get("/ocs/v2.php/cloud/user", params={"format": "json"}, headers=OCS).json()
    assert user["ocs"]["meta"]["statuscode"] == 200
    assert user["ocs"]["data"]["id"] == ALICE
    assert user["ocs"]["data"]["display-name"] == "Alice A."
    assert user["ocs"]["data"]["groups"] == ["staff"]
    # The login name is not a DAV home: a client building paths from it gets 404.
    assert alice.request("PROPFIND", f"/remote.php/dav/files/{ALICE_LOGIN}/").status_code == 404
    assert alice.request("PROPFIND", f"/remote.php/dav/files/{BOB}/").status_code == 404


def test_ocs_answers_xml_by_default_and_v1_with_statuscode_100(alice: httpx.Client) -> None:
    resp = alice.get("/ocs/v1.php/cloud/user", headers=OCS)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/xml")
    assert b"<statuscode>100</statuscode>" in resp.content
    assert f"<id>{ALICE}</id>".encode() in resp.content


def test_wrong_credentials_answer_401_everywhere(nc: NextcloudDialect) -> None:
    with httpx.Client(base_url=nc.url, auth=(ALICE_LOGIN, "wrong")) as c:
        for method, url, headers in [
            ("PROPFIND", ROOT, {}),
            ("GET", "/ocs/v2.php/cloud/user?format=json", OCS),
            ("GET", "/index.php/apps/deck/api/v1.0/boards", OCS),
            ("PROPFIND", f"/remote.php/dav/calendars/{ALICE}/", {}),
        ]:
            resp = c.request(method, url, headers=headers)
            assert resp.status_code == 401, url
            assert resp.headers["www-authenticate"].startswith("Basic realm=")
    # The uid is not a login name either.
    with httpx.Client(base_url=nc.url, auth=(ALICE, nc.app_password(ALICE))) as c:
        assert c.request("PROPFIND", ROOT).status_code == 401


def test_a_revoked_app_password_answers_401(nc: NextcloudDialect) -> None:
    password = nc.app_password(ALICE)
    with httpx.Client(base_url=nc.url, auth=(ALICE_LOGIN, password)) as c:
        assert c.request("PROPFIND", ROOT, headers={"Depth": "0"}).status_code == 207
        nc.revoke(password)
        assert c.request("PROPFIND", ROOT, headers={"Depth": "0"}).status_code == 401
    other = nc.app_password(ALICE)
    with httpx.Client(base_url=nc.url, auth=(ALICE_LOGIN, other)) as c:
        assert c.delete("/ocs/v2.php/core/apppassword", headers=OCS).status_code == 200
        assert c.request("PROPFIND", ROOT, headers={"Depth": "0"}).status_code == 401


def test_ocs_without_its_header_fails_the_csrf_check(alice: httpx.Client) -> None:
    resp = alice.get("/ocs/v2.php/cloud/user?format=json")
    assert resp.status_code == 412
    assert resp.json() == {"message": "CSRF check failed"}


# PROPFIND --------------------------------------------------------------------------------


def test_propfind_depths_properties_and_404_propstat(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    nc.put(ALICE, "Docs/a.txt", b"hello")
    nc.mkdir(ALICE, "Docs/sub")
    assert [e.href for e in propfind(alice, ROOT + "Docs/", "0")] == [ROOT + "Docs/"]
    names = (
        ETAG,
        FILEID,
        f"{D}getcontentlength",
        f"{OC}size",
        f"{OC}permissions",
        f"{OC}owner-id",
        f"{NC}is-encrypted",
        f"{NC}mount-type",
        f"{OC}no-such-thing",
    )
    entries = by_href(propfind(alice, ROOT + "Docs/", "1", *names))
    assert set(entries) == {ROOT + "Docs/", ROOT + "Docs/a.txt", ROOT + "Docs/sub/"}
    folder, file = entries[ROOT + "Docs/"], entries[ROOT + "Docs/a.txt"]
    assert file.text(f"{D}getcontentlength") == "5"
    assert f"{D}getcontentlength" in folder.missing  # a folder has no content length
    assert f"{OC}no-such-thing" in folder.missing and f"{OC}no-such-thing" in file.missing
    assert folder.text(f"{OC}size") == "5"
    assert int(file.text(FILEID)) == nc.fileid(ALICE, "Docs/a.txt")
    assert file.text(f"{OC}permissions") == "RGDNVW"
    assert folder.text(f"{OC}permissions") == "RGDNVCK"
    assert file.text(f"{OC}owner-id") == ALICE
    assert file.text(ETAG) == f'"{nc.node(ALICE, "Docs/a.txt").etag}"'
    # No body is allprop: Nextcloud's short list.
    resp = alice.request("PROPFIND", ROOT + "Docs/a.txt", headers={"Depth": "0"})
    [entry] = multistatus(resp.content)
    assert set(entry.found) == {
        f"{D}getlastmodified",
        f"{D}getcontentlength",
        f"{D}resourcetype",
        ETAG,
        f"{D}getcontenttype",
    }
    assert entry.text(f"{D}getcontenttype") == "text/plain"
    assert b'xmlns:oc="http://owncloud.org/ns"' in resp.content
    assert alice.request("PROPFIND", ROOT + "nope", headers={"Depth": "0"}).status_code == 404


def test_depth_infinity_is_answered_clamped_or_refused(nc: NextcloudDialect) -> None:
    nc.put(ALICE, "a/b/c.txt", b"x")
    with client(nc, ALICE) as c:
        assert len(propfind(c, ROOT, "infinity")) == 4  # root, a, a/b, a/b/c.txt
    modes: list[tuple[DepthInfinity, int]] = [("clamp", 207), ("forbid", 403)]
    for mode, expected in modes:
        with NextcloudDialect(depth_infinity=mode) as other:
            other.add_user(ALICE)
            other.put(ALICE, "a/b/c.txt", b"x")
            with client(other, ALICE) as c:
                resp = c.request("PROPFIND", ROOT, headers={"Depth": "infinity"})
                assert resp.status_code == expected
                if mode == "clamp":
                    assert len(multistatus(resp.content)) == 2


def test_get_streams_the_bytes_and_head_the_headers(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    data = bytes(range(256)) * 1024  # 256 KiB: several body chunks
    node = nc.put(ALICE, "big.bin", data)
    with alice.stream("GET", ROOT + "big.bin") as resp:
        assert resp.status_code == 200
        chunks = list(resp.iter_raw())
    assert b"".join(chunks) == data
    head = alice.head(ROOT + "big.bin")
    assert head.headers["etag"] == f'"{node.etag}"'
    assert head.headers["content-length"] == str(len(data))
    assert head.headers["oc-fileid"].startswith(f"{node.fileid:08d}")


# ETags ----------------------------------------------------------------------------------


def test_a_deep_change_propagates_to_the_root_and_not_to_siblings(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    nc.put(ALICE, "a/b/c/file.txt", b"one")
    nc.put(ALICE, "a/b/sibling.txt", b"s")
    nc.put(ALICE, "a/other/x.txt", b"x")
    nc.put(ALICE, "top.txt", b"t")
    paths = [
        "",
        "a",
        "a/b",
        "a/b/c",
        "a/b/c/file.txt",
        "a/b/sibling.txt",
        "a/other",
        "a/other/x.txt",
        "top.txt",
    ]
    before = {p: nc.etag(ALICE, p) for p in paths}
    root_before = etags(alice, ROOT, "0")[ROOT]
    nc.world.clock.advance(60)
    nc.put(ALICE, "a/b/c/file.txt", b"two!")
    after = {p: nc.etag(ALICE, p) for p in paths}
    changed = {p for p in paths if before[p] != after[p]}
    assert changed == {"", "a", "a/b", "a/b/c", "a/b/c/file.txt"}
    assert etags(alice, ROOT, "0")[ROOT] != root_before
    # Sizes and mtimes follow the propagator too.
    assert nc.node(ALICE, "a").size == 4 + 1 + 1
    assert nc.node(ALICE, "a/b").mtime == nc.node(ALICE, "a/b/c/file.txt").mtime
    assert nc.node(ALICE, "a/other").mtime < nc.node(ALICE, "a").mtime


def test_create_and_delete_propagate_too(nc: NextcloudDialect, alice: httpx.Client) -> None:
    nc.mkdir(ALICE, "a/b")
    before = nc.etag(ALICE, "a")
    resp = alice.put(ROOT + "a/b/new.txt", content=b"new")
    assert resp.status_code == 201
    assert resp.headers["oc-etag"] == f'"{nc.node(ALICE, "a/b/new.txt").etag}"'
    middle = nc.etag(ALICE, "a")
    assert middle != before
    assert alice.delete(ROOT + "a/b/new.txt").status_code == 204
    assert nc.etag(ALICE, "a") not in (before, middle)


def test_a_move_keeps_the_fileid_and_propagates_from_both_places(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    node = nc.put(ALICE, "from/deep/f.txt", b"x")
    nc.mkdir(ALICE, "to/place")
    fileid, etag, mtime = node.fileid, node.etag, node.mtime
    before = {p: nc.etag(ALICE, p) for p in ("", "from", "from/deep", "to", "to/place")}
    nc.world.clock.advance(10)
    resp = alice.request(
        "MOVE",
        ROOT + "from/deep/f.txt",
        headers={"Destination": nc.dav_url(ALICE, "to/place/g.txt")},
    )
    assert resp.status_code == 201
    assert nc.fileid(ALICE, "to/place/g.txt") == fileid
    assert nc.node(ALICE, "to/place/g.txt").etag == etag  # the node itself keeps its ETag
    assert nc.node(ALICE, "to/place/g.txt").mtime == mtime  # and its mtime
    assert all(before[p] != nc.etag(ALICE, p) for p in before)
    # A rename through the control API keeps the fileid as well.
    assert nc.move(ALICE, "to/place/g.txt", "to/place/h.txt").fileid == fileid
    with pytest.raises(KeyError):
        nc.node(ALICE, "to/place/g.txt")


def test_a_move_out_of_a_received_share_is_a_copy_with_a_new_fileid(
    nc: NextcloudDialect, bob: httpx.Client
) -> None:
    nc.put(ALICE, "Shared/doc.txt", b"doc")
    nc.share(ALICE, "Shared", SHARE_USER, BOB)
    old_id = nc.fileid(ALICE, "Shared/doc.txt")
    bob_root = f"/remote.php/dav/files/{BOB}/"
    resp = bob.request(
        "MOVE", bob_root + "Shared/doc.txt", headers={"Destination": nc.dav_url(BOB, "mine.txt")}
    )
    assert resp.status_code == 201
    assert nc.node(BOB, "mine.txt").data == b"doc"
    assert nc.fileid(BOB, "mine.txt") != old_id  # another storage: copy + delete
    with pytest.raises(KeyError):
        nc.node(ALICE, "Shared/doc.txt")
    assert [r.depth for r in nc.log.select("MOVE")] == [None]


def test_system_tags_show_without_changing_an_etag(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    nc.put(ALICE, "t/tagged.txt", b"x")
    nc.put(ALICE, "t/plain.txt", b"y")
    before = etags(alice, ROOT + "t/")
    tag = nc.tag(ALICE, "t/tagged.txt", "invoice")
    assert etags(alice, ROOT + "t/") == before  # nextcloud/server#8477: tags propagate nothing
    entry = by_href(propfind(alice, ROOT + "t/", "1", f"{NC}system-tags"))[ROOT + "t/tagged.txt"]
    [element] = entry.found[f"{NC}system-tags"]
    assert element.tag == f"{NC}system-tag" and element.text == "invoice"
    assert element.get(f"{OC}id") == str(tag.id)
    fileid = nc.fileid(ALICE, "t/tagged.txt")
    relations = propfind(
        alice,
        f"/remote.php/dav/systemtags-relations/files/{fileid}",
        "1",
        f"{OC}id",
        f"{OC}display-name",
    )
    assert [e.text(f"{OC}display-name") for e in relations[1:]] == ["invoice"]
    report = (
        f'<oc:filter-files xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>'
        f"<oc:fileid/></d:prop><oc:filter-rules><oc:systemtag>{tag.id}</oc:systemtag>"
        "</oc:filter-rules></oc:filter-files>"
    )
    resp = alice.request("REPORT", ROOT, content=report.encode())
    assert [e.href for e in multistatus(resp.content)] == [ROOT + "t/tagged.txt"]


def test_encrypted_files_say_so(nc: NextcloudDialect, alice: httpx.Client) -> None:
    nc.put(ALICE, "vault/secret.bin", b"\x00cipher")
    nc.put(ALICE, "open.txt", b"plain")
    nc.set_encrypted(ALICE, "vault")
    entries = by_href(propfind(alice, ROOT, "infinity", f"{NC}is-encrypted"))
    flags = {href: e.text(f"{NC}is-encrypted") for href, e in entries.items()}
    assert flags[ROOT + "vault/"] == flags[ROOT + "vault/secret.bin"] == "1"
    assert flags[ROOT + "open.txt"] == "0"


# shares ---------------------------------------------------------------------------------


def test_a_share_mounts_in_the_recipients_root_and_changes_its_etag(
    nc: NextcloudDialect, bob: httpx.Client, alice: httpx.Client
) -> None:
    nc.put(ALICE, "Projects/plan.md", b"# plan")
    bob_root = f"/remote.php/dav/files/{BOB}/"
    root_before = etags(bob, bob_root, "0")[bob_root]
    share = nc.share(ALICE, "Projects", SHARE_USER, BOB, permissions=1)
    entries = by_href(
        propfind(
            bob,
            bob_root,
            "1",
            ETAG,
            FILEID,
            f"{NC}mount-type",
            f"{OC}owner-id",
            f"{NC}is-mount-root",
            f"{OC}permissions",
        )
    )
    mounted = entries[bob_root + "Projects/"]
    assert int(mounted.text(FILEID)) == nc.fileid(ALICE, "Projects")
    assert mounted.text(f"{NC}mount-type") == "shared"
    assert mounted.text(f"{OC}owner-id") == ALICE
    assert mounted.text(f"{NC}is-mount-root") == "true"
    assert mounted.text(f"{OC}permissions") == "SG"
    root_shared = entries[bob_root].text(ETAG)
    assert root_shared != root_before
    # A change inside the share reaches bob's root; a permission change too.
    nc.put(ALICE, "Projects/plan.md", b"# plan v2")
    root_changed = etags(bob, bob_root, "0")[bob_root]
    assert root_changed != root_shared
    nc.set_share_permissions(share, 3)
    root_perms = etags(bob, bob_root, "0")[bob_root]
    assert root_perms != root_changed
    # The owner's node tells who has it.
    own = propfind(alice, ROOT + "Projects/", "0", f"{OC}share-types", f"{NC}sharees")[0]
    assert [t.text for t in own.found[f"{OC}share-types"]] == ["0"]
    assert own.found[f"{NC}sharees"][0].findtext(f"{NC}id") == BOB
    nc.unshare(share)
    assert bob_root + "Projects/" not in etags(bob, bob_root)
    assert etags(bob, bob_root, "0")[bob_root] not in (root_shared, root_changed, root_perms)


def test_group_shares_clashing_names_and_link_shares(
    nc: NextcloudDialect, bob: httpx.Client
) -> None:
    nc.put(ALICE, "Team/a.txt", b"a")
    nc.put(ALICE, "Public/p.txt", b"p")
    nc.mkdir(BOB, "Team")
    bob_root = f"/remote.php/dav/files/{BOB}/"
    nc.share(ALICE, "Team", SHARE_GROUP, "staff")
    link = nc.share(ALICE, "Public", SHARE_LINK)
    assert link.token
    listing = etags(bob, bob_root)
    assert bob_root + "Team%20(2)/" in listing  # bob's own Team keeps its name
    assert not any("Public" in href for href in listing)  # a link grants no user anything
    with client(nc, CAROL) as carol:
        carol_root = f"/remote.php/dav/files/{CAROL}/"
        assert list(etags(carol, carol_root)) == [carol_root]  # not in the group


def test_ocs_share_lists(nc: NextcloudDialect, alice: httpx.Client, bob: httpx.Client) -> None:
    nc.put(ALICE, "Docs/a.txt", b"a")
    nc.put(ALICE, "Docs/b.txt", b"b")
    to_bob = nc.share(ALICE, "Docs", SHARE_USER, BOB, permissions=17)
    nc.share(ALICE, "Docs/a.txt", SHARE_GROUP, "staff")
    nc.share(ALICE, "Docs/b.txt", SHARE_LINK)
    api = "/ocs/v2.php/apps/files_sharing/api/v1/shares"

    def get(c: httpx.Client, **params: str) -> httpx.Response:
        return c.get(api, params={"format": "json", **params}, headers=OCS)

    owned = get(alice).json()["ocs"]
    assert owned["meta"] == {
        "status": "ok",
        "statuscode": 200,
        "message": "OK",
        "totalitems": "",
        "itemsperpage": "",
    }
    assert [s["share_type"] for s in owned["data"]] == [0, 1, 3]
    first = owned["data"][0]
    assert first["path"] == "/Docs" and first["item_type"] == "folder"
    assert first["share_with"] == BOB and first["share_with_displayname"] == "Bob B."
    assert first["file_source"] == nc.fileid(ALICE, "Docs") and first["permissions"] == 17
    assert owned["data"][2]["url"].endswith("/s/" + owned["data"][2]["token"])
    on_path = get(alice, path="/Docs").json()["ocs"]["data"]
    assert [s["id"] for s in on_path] == [str(to_bob.id)]
    below = get(alice, path="/Docs", subfiles="true").json()["ocs"]["data"]
    assert sorted(s["share_type"] for s in below) == [1, 3]
    assert get(alice, path="/Docs/a.txt", subfiles="true").status_code == 400
    assert get(alice, path="/missing").status_code == 404
    mine = get(bob, shared_with_me="true").json()["ocs"]["data"]
    assert sorted(s["path"] for s in mine) == ["/Docs", "/a.txt"]
    assert {s["uid_owner"] for s in mine} == {ALICE}
    # Create and delete over OCS.
    made = alice.post(
        api + "?format=json",
        headers=OCS,
        data={"path": "/Docs/b.txt", "shareType": "0", "shareWith": CAROL},
    )
    share_id = made.json()["ocs"]["data"]["id"]
    assert alice.delete(f"{api}/{share_id}?format=json", headers=OCS).status_code == 200
    assert alice.get(f"{api}/{share_id}?format=json", headers=OCS).status_code == 404
    bad = alice.post(api + "?format=json", headers=OCS, data={"path": "/Docs", "shareType": "9"})
    assert bad.status_code == 400


# SEARCH ---------------------------------------------------------------------------------


def _search(after: int, limit: int, first: int) -> bytes:
    return f"""<?xml version="1.0"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"
    xmlns:ns="https://github.com/icewind1991/SearchDAV/ns">
 <d:basicsearch>
  <d:select><d:prop><oc:fileid/><d:getlastmodified/></d:prop></d:select>
  <d:from><d:scope><d:href>/files/{ALICE}</d:href><d:depth>infinity</d:depth></d:scope></d:from>
  <d:where><d:and>
   <d:gt><d:prop><d:getlastmodified/></d:prop><d:literal>{after}</d:literal></d:gt>
   <d:not><d:is-collection/></d:not>
  </d:and></d:where>
  <d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:ascending/></d:order></d:orderby>
  <d:limit><d:nresults>{limit}</d:nresults><ns:firstresult>{first}</ns:firstresult></d:limit>
 </d:basicsearch>
</d:searchrequest>""".encode()


def test_search_finds_only_files_modified_after_t_in_pages(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    for i in range(4):
        nc.put(ALICE, f"old/{i}.txt", b"old")
    t = nc.world.clock.advance(100)
    expected = []
    for i in range(5):
        nc.world.clock.advance(1)
        expected.append(nc.put(ALICE, f"new/d{i}/{i}.txt", b"new").fileid)
    nc.world.clock.advance(1)
    nc.put(ALICE, "old/0.txt", b"rewritten")
    expected.append(nc.fileid(ALICE, "old/0.txt"))
    pages = []
    for first in range(0, 8, 2):
        resp = alice.request(
            "SEARCH",
            "/remote.php/dav/",
            content=_search(t, 2, first),
            headers={"Content-Type": "text/xml"},
        )
        assert resp.status_code == 207, resp.text
        pages.append([int(e.text(FILEID)) for e in multistatus(resp.content)])
    assert pages == [expected[0:2], expected[2:4], expected[4:6], []]
    # ISO 8601 literals work as well; a SEARCH that is not XML is not handled.
    iso = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(t))
    body = _search(t, 10, 0).replace(
        f"<d:literal>{t}</d:literal>".encode(), f"<d:literal>{iso}</d:literal>".encode()
    )
    resp = alice.request(
        "SEARCH", "/remote.php/dav/", content=body, headers={"Content-Type": "application/xml"}
    )
    assert [int(e.text(FILEID)) for e in multistatus(resp.content)] == expected
    assert alice.request("SEARCH", "/remote.php/dav/", content=body).status_code == 501


def test_search_sees_received_shares(nc: NextcloudDialect, bob: httpx.Client) -> None:
    nc.put(ALICE, "S/x.txt", b"x")
    nc.share(ALICE, "S", SHARE_USER, BOB)
    body = _search(0, 10, 0).replace(f"/files/{ALICE}".encode(), f"/files/{BOB}".encode())
    resp = bob.request(
        "SEARCH", "/remote.php/dav/", content=body, headers={"Content-Type": "text/xml"}
    )
    assert [e.href for e in multistatus(resp.content)] == [f"/remote.php/dav/files/{BOB}/S/x.txt"]


# Login Flow v2 --------------------------------------------------------------------------


def test_login_flow_v2_round_trip(nc: NextcloudDialect) -> None:
    with httpx.Client(base_url=nc.url) as anonymous:
        started = anonymous.post("/index.php/login/v2").json()
        poll = started["poll"]
        assert poll["endpoint"] == f"{nc.url}/index.php/login/v2/poll"
        assert started["login"].startswith(f"{nc.url}/index.php/login/v2/flow/")
        assert anonymous.post(poll["endpoint"], data={"token": poll["token"]}).status_code == 404
        assert anonymous.get(started["login"]).status_code == 200
        password = nc.grant_login(started["login"], ALICE)
        granted = anonymous.post(poll["endpoint"], data={"token": poll["token"]})
        assert granted.status_code == 200
        assert granted.json() == {
            "server": nc.url,
            "loginName": ALICE_LOGIN,
            "appPassword": password,
        }
        assert anonymous.post(poll["endpoint"], data={"token": poll["token"]}).status_code == 404
    with httpx.Client(base_url=nc.url, auth=(ALICE_LOGIN, password)) as c:
        assert c.request("PROPFIND", ROOT, headers={"Depth": "0"}).status_code == 207


# faults ---------------------------------------------------------------------------------


def test_faults_answer_once_then_the_truth(nc: NextcloudDialect, alice: httpx.Client) -> None:
    nc.put(ALICE, "d/a.txt", b"a")
    nc.fault("empty_207", method="PROPFIND", path_prefix=ROOT + "d")
    empty = alice.request("PROPFIND", ROOT + "d/", headers={"Depth": "1"})
    assert empty.status_code == 207 and multistatus(empty.content) == []
    nc.fault("self_only", method="PROPFIND")
    assert [e.href for e in propfind(alice, ROOT + "d/")] == [ROOT + "d/"]
    assert len(propfind(alice, ROOT + "d/")) == 2
    # A folder vanishing mid-walk: the listing names it, the next PROPFIND finds nothing.
    nc.fault("not_found", path_prefix=ROOT + "d/")
    assert ROOT + "d/" in etags(alice, ROOT)
    assert alice.request("PROPFIND", ROOT + "d/").status_code == 404
    nc.fault("status", status=429, retry_after=7, times=2)
    for _ in range(2):
        resp = alice.request("PROPFIND", ROOT)
        assert resp.status_code == 429 and resp.headers["retry-after"] == "7"
    assert alice.request("PROPFIND", ROOT).status_code == 207
    nc.fault("status", status=503, retry_after=30)
    assert alice.get(ROOT + "d/a.txt").status_code == 503
    nc.fault("unauthorized", user=ALICE)
    assert alice.request("PROPFIND", ROOT).status_code == 401
    assert alice.request("PROPFIND", ROOT).status_code == 207


def test_a_fault_matches_method_path_and_user(
    nc: NextcloudDialect, alice: httpx.Client, bob: httpx.Client
) -> None:
    nc.fault("status", status=503, method="GET", path_prefix="/ocs/", user=BOB, times=None)
    assert bob.get("/ocs/v2.php/cloud/user", headers=OCS).status_code == 503
    assert bob.get("/ocs/v2.php/cloud/user", headers=OCS).status_code == 503
    assert alice.get("/ocs/v2.php/cloud/user", headers=OCS).status_code == 200
    assert bob.request("PROPFIND", f"/remote.php/dav/files/{BOB}/").status_code == 207
    nc.clear_faults()
    assert bob.get("/ocs/v2.php/cloud/user", headers=OCS).status_code == 200


def test_a_slow_body_trickles_past_a_read_timeout(
    nc: NextcloudDialect, alice: httpx.Client
) -> None:
    nc.put(ALICE, "slow.bin", b"z" * 32)
    nc.fault("slow_body", path_prefix=ROOT + "slow", chunk=16, delay=1.0)
    with pytest.raises(httpx.ReadTimeout):
        alice.get(ROOT + "slow.bin", timeout=httpx.Timeout(5, read=0.2))
    nc.fault("slow_body", path_prefix=ROOT + "slow", chunk=16, delay=0.05)
    with alice.stream("GET", ROOT + "slow.bin") as resp:
        pieces = list(resp.iter_raw())
    assert b"".join(pieces) == b"z" * 32 and len(pieces) >= 2


def test_a_reset_closes_the_connection_mid_body(nc: NextcloudDialect, alice: httpx.Client) -> None:
    nc.put(ALICE, "big.bin", b"y" * 10_000)
    nc.fault("reset", path_prefix=ROOT + "big", after_bytes=100)
    with pytest.raises(httpx.RemoteProtocolError):
        alice.get(ROOT + "big.bin")
    assert alice.get(ROOT + "big.bin").content == b"y" * 10_000
    [record] = [r for r in nc.log.snapshot() if r.fault == "reset"]
    assert record.bytes == 100


# the request log ------------------------------------------------------------------------


def test_the_request_log_counts_what_a_tick_sent(nc: NextcloudDialect, alice: httpx.Client) -> None:
    nc.put(ALICE, "a.txt", b"a")
    alice.request("PROPFIND", ROOT, headers={"Depth": "1"})
    nc.reset_log()
    resp = alice.request("PROPFIND", ROOT, headers={"Depth": "0"})  # nothing changed: 1 request
    assert nc.log.count() == 1
    [record] = nc.log.snapshot()
    assert (record.method, record.path, record.depth, record.status, record.user) == (
        "PROPFIND",
        ROOT,
        "0",
        207,
        ALICE,
    )
    assert record.bytes == len(resp.content)
    alice.get(ROOT + "a.txt")
    alice.get("/ocs/v2.php/cloud/user", headers=OCS)
    assert nc.log.count("GET") == 2 and nc.log.count(path_prefix="/ocs/") == 1
    assert nc.log.counters()["total"] == 3
    nc.reset_log()
    assert nc.log.count() == 0


def test_status_and_capabilities_need_no_login(nc: NextcloudDialect) -> None:
    with httpx.Client(base_url=nc.url) as c:
        assert c.get("/status.php").json()["productname"] == "Nextcloud"
        caps = c.get("/ocs/v2.php/cloud/capabilities?format=json").json()["ocs"]["data"]
        assert caps["capabilities"]["core"]["webdav-root"] == "remote.php/webdav"
        assert "deck" in caps["capabilities"]
