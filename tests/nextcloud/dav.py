"""Nextcloud's WebDAV endpoint /remote.php/dav/: files, the principal, PROPFIND, GET and writes.

Follows https://docs.nextcloud.com/server/latest/developer_manual/client_apis/WebDAV/basic.html
("Basic APIs": the properties table, listing folders with Depth 0/1, downloads, PUT, MKCOL,
DELETE, MOVE with a Destination URL and Overwrite, the OC-ETag/OC-FileId response headers) and
sabre/dav's PROPFIND (RFC 4918 section 9.1): no body means allprop (the doc: "last modified
date, file size, whether it's a folder, etag and mime type"), each requested property that does
not apply to a node goes to a 404 propstat, a missing Depth header counts as 1. Nextcloud turns
Depth infinity on (apps/dav/lib/Connector/Sabre/Server.php sets enablePropfindDepthInfinity);
sabre/dav's own default answers it as Depth 1, and other servers refuse it with 403
propfind-finite-depth: `depth_infinity` picks one of the three.
The current-user-principal and calendar-home-set answers follow RFC 5397 and RFC 4791 section
6.2.1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal
from urllib.parse import quote, unquote, urlsplit

from tests.nextcloud.model import (
    PERMISSION_CREATE,
    PERMISSION_DELETE,
    PERMISSION_SHARE,
    PERMISSION_UPDATE,
    SHARE_LINK,
    Located,
    World,
    padded_id,
)
from tests.nextcloud.web import (
    CAL,
    DAV,
    NC,
    OC,
    OCS_NS,
    SABRE,
    Multistatus,
    QName,
    Request,
    Response,
    dav_error,
    http_date,
    parse_xml,
    requested_props,
    tag,
    text,
)

DepthInfinity = Literal["allow", "clamp", "forbid"]
PREFIX = "/remote.php/dav"
ALLPROP_FILE = [
    (DAV, "getlastmodified"),
    (DAV, "getcontentlength"),
    (DAV, "resourcetype"),
    (DAV, "getetag"),
    (DAV, "getcontenttype"),
]
ALLPROP_DIR = [
    (DAV, "getlastmodified"),
    (DAV, "resourcetype"),
    (DAV, "quota-used-bytes"),
    (DAV, "quota-available-bytes"),
    (DAV, "getetag"),
]


def encode(segment: str) -> str:
    """sabre/http's encodePath for one segment: all but A-Za-z0-9_-.~()/:@ percent-encoded."""
    return quote(segment, safe="()~:@")


def href(uid: str, loc: Located) -> str:
    path = "/".join(encode(p) for p in loc.view_path.split("/") if p)
    url = f"{PREFIX}/files/{encode(uid)}/{path}"
    return url if not loc.node.is_dir or url.endswith("/") else url + "/"


def dav_permissions(world: World, loc: Located) -> str:
    """The oc:permissions letters, in Nextcloud's order (S R M G D NV W CK)."""
    perm = world.permissions(loc)
    out = "S" if loc.share is not None else ""
    out += "R" if perm & PERMISSION_SHARE else ""
    out += "G"
    out += "D" if perm & PERMISSION_DELETE else ""
    out += "NV" if perm & PERMISSION_UPDATE else ""
    if loc.node.is_dir:
        out += "CK" if perm & PERMISSION_CREATE else ""
    else:
        out += "W" if perm & PERMISSION_UPDATE else ""
    return out


class FileProps:
    """The properties of one node as one user sees it, computed only when asked for."""

    def __init__(self, world: World, uid: str, loc: Located) -> None:
        self.world, self.uid, self.loc, self.node = world, uid, loc, loc.node
        etag, self.size, self.mtime = world.seen(uid, loc)
        self.etag = f'"{etag}"'

    def get(self, name: QName) -> str | None:
        getter = _GETTERS.get(name)
        return None if getter is None else getter(self)

    def _file(self, value: str) -> str | None:
        return None if self.node.is_dir else value

    def _dir(self, value: str) -> str | None:
        return value if self.node.is_dir else None

    def _own_shares(self) -> list[tuple[int, str | None]]:
        shares = self.world.shares_on.get(self.node.fileid, [])
        return [(s.share_type, s.share_with) for s in shares if s.owner == self.uid]

    def share_types(self) -> str:
        types = sorted({t for t, _ in self._own_shares()})
        return "".join(tag((OC, "share-type"), str(t)) for t in types)

    def sharees(self) -> str:
        out = []
        for share_type, who in self._own_shares():
            if share_type == SHARE_LINK or who is None:
                continue
            user = self.world.users.get(who)
            name = user.display_name if user and share_type == 0 else who
            out.append(
                tag(
                    (NC, "sharee"),
                    tag((NC, "id"), text(who))
                    + tag((NC, "display-name"), text(name))
                    + tag((NC, "type"), str(share_type)),
                )
            )
        return "".join(out)

    def system_tags(self) -> str:
        out = []
        for tag_id in sorted(self.node.tags):
            t = self.world.tags.get(tag_id)
            if t is None or not t.user_visible:
                continue
            assignable = "true" if t.user_assignable else "false"
            out.append(
                f'<nc:system-tag oc:can-assign="{assignable}" oc:id="{t.id}" '
                f'oc:user-assignable="{assignable}" oc:user-visible="true">'
                f"{text(t.name)}</nc:system-tag>"
            )
        return "".join(out)

    def owner_name(self) -> str:
        user = self.world.users.get(self.node.owner)
        return text(user.display_name if user else self.node.owner)

    def has_preview(self) -> str:
        ctype = self.node.content_type
        previewable = not self.node.is_dir and ctype.split("/")[0] in ("image", "text")
        return "true" if previewable and not self.node.encrypted else "false"

    def counts(self, dirs: bool) -> str | None:
        if not self.node.is_dir:
            return None
        return str(sum(1 for c in self.node.children.values() if c.is_dir == dirs))


_GETTERS: dict[QName, Callable[[FileProps], str | None]] = {
    (DAV, "getetag"): lambda p: text(p.etag),
    (DAV, "getlastmodified"): lambda p: http_date(p.mtime),
    (DAV, "getcontentlength"): lambda p: p._file(str(p.size)),
    (DAV, "getcontenttype"): lambda p: p._file(text(p.node.content_type)),
    (DAV, "resourcetype"): lambda p: tag((DAV, "collection")) if p.node.is_dir else "",
    (DAV, "displayname"): lambda p: text(p.node.name or p.uid),
    (DAV, "creationdate"): lambda p: _iso(p.node.ctime),
    (DAV, "quota-used-bytes"): lambda p: p._dir(str(p.size)),
    (DAV, "quota-available-bytes"): lambda p: p._dir("-3"),
    (OC, "fileid"): lambda p: str(p.node.fileid),
    (OC, "id"): lambda p: padded_id(p.node.fileid),
    (OC, "size"): lambda p: str(p.size),
    (OC, "permissions"): lambda p: dav_permissions(p.world, p.loc),
    (OC, "owner-id"): lambda p: text(p.node.owner),
    (OC, "owner-display-name"): lambda p: p.owner_name(),
    (OC, "share-types"): lambda p: p.share_types(),
    (OC, "favorite"): lambda p: "0",
    (OC, "tags"): lambda p: "",
    (OC, "comments-unread"): lambda p: "0",
    (NC, "sharees"): lambda p: p.sharees(),
    (NC, "has-preview"): lambda p: p.has_preview(),
    (NC, "system-tags"): lambda p: p.system_tags(),
    (NC, "mount-type"): lambda p: "shared" if p.loc.share is not None else "",
    (NC, "is-mount-root"): lambda p: "true" if p.loc.is_mount_root else "false",
    (NC, "is-encrypted"): lambda p: "1" if p.node.encrypted else "0",
    (NC, "hidden"): lambda p: "false",
    (NC, "creation_time"): lambda p: str(p.node.ctime),
    (NC, "upload_time"): lambda p: str(p.node.ctime),
    (NC, "contained-file-count"): lambda p: p.counts(False),
    (NC, "contained-folder-count"): lambda p: p.counts(True),
    (OCS_NS, "share-permissions"): lambda p: str(p.world.permissions(p.loc)),
}


def _iso(ts: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def add_node(
    ms: Multistatus, world: World, uid: str, loc: Located, wanted: list[QName] | None
) -> None:
    props = FileProps(world, uid, loc)
    names = wanted if wanted is not None else (ALLPROP_DIR if loc.node.is_dir else ALLPROP_FILE)
    found: list[tuple[QName, str]] = []
    missing: list[QName] = []
    for name in names:
        value = props.get(name)
        if value is None:
            if wanted is not None:
                missing.append(name)
        else:
            found.append((name, value))
    ms.add(href(uid, loc), found, missing)


def depth(req: Request, infinity: DepthInfinity) -> int | Response:
    """0, 1 or -1 (infinity), or the 403 sabre/dav answers when infinity is forbidden."""
    raw = req.headers.get("depth", "1").strip().lower()
    if raw == "0":
        return 0
    if raw == "infinity" and infinity == "allow":
        return -1
    if raw == "infinity" and infinity == "forbid":
        return dav_error(
            403, "Forbidden", "Depth infinity is not supported", inner="<d:propfind-finite-depth/>"
        )
    return 1


def propfind_files(
    world: World, req: Request, uid: str, rel: str, infinity: DepthInfinity
) -> Response:
    try:
        wanted = requested_props(parse_xml(req.body))
    except ValueError as e:
        return dav_error(400, "BadRequest", str(e))
    want_depth = depth(req, infinity)
    if isinstance(want_depth, Response):
        return want_depth
    with world.lock:
        loc = world.locate(uid, rel)
        if loc is None:
            return not_found(rel)
        ms = Multistatus()
        stack = [(loc, 0)]
        while stack:
            here, level = stack.pop(0)
            add_node(ms, world, uid, here, wanted)
            if here.node.is_dir and (want_depth == -1 or level < want_depth):
                stack.extend((c, level + 1) for c in world.children(uid, here))
        return ms.response([("Vary", "Brief,Prefer")])


def not_found(rel: str) -> Response:
    return dav_error(404, "NotFound", f"File with name {rel} could not be located")


def get_file(world: World, req: Request, uid: str, rel: str) -> Response:
    with world.lock:
        loc = world.locate(uid, rel)
        if loc is None:
            return not_found(rel)
        node = loc.node
        if node.is_dir:
            return dav_error(501, "NotImplemented", "GET on a folder needs Accept: application/zip")
        etag, size, mtime = world.seen(uid, loc)
        headers = [
            ("Content-Type", node.content_type),
            ("Content-Length", str(size)),
            ("ETag", f'"{etag}"'),
            ("OC-ETag", f'"{etag}"'),
            ("Last-Modified", http_date(mtime)),
            ("OC-FileId", padded_id(node.fileid)),
        ]
        body = b"" if req.method == "HEAD" else node.data
        return Response(200, body, headers)


def write(world: World, req: Request, uid: str, rel: str) -> Response:
    """PUT, MKCOL, DELETE and MOVE on a user's files."""
    with world.lock:
        loc = world.locate(uid, rel)
        parent_rel, _, name = rel.strip("/").rpartition("/")
        parent = world.locate(uid, parent_rel)
        if req.method == "DELETE":
            if loc is None:
                return not_found(rel)
            if loc.is_mount_root and loc.share is not None:
                world.unshare(loc.share.id)
            elif not world.permissions(loc) & PERMISSION_DELETE:
                return dav_error(403, "Forbidden", "No delete permission")
            else:
                world.delete(loc.node, actor=uid)
            return Response(204)
        if req.method == "MOVE":
            return _move(world, req, uid, loc, rel)
        if parent is None or not parent.node.is_dir:
            return dav_error(409, "Conflict", "Parent folder does not exist")
        if req.method == "MKCOL":
            if loc is not None:
                return dav_error(
                    405, "MethodNotAllowed", "The resource you tried to create already exists"
                )
            node = world.create(parent.node, name, True, actor=uid)
            return Response(201, headers=[("OC-FileId", padded_id(node.fileid))])
        mtime = req.headers.get("x-oc-mtime")
        when = int(float(mtime)) if mtime else None
        extra = [("X-OC-MTime", "accepted")] if mtime else []
        if loc is not None:
            if loc.node.is_dir:
                return dav_error(405, "MethodNotAllowed", "Cannot PUT to a folder")
            if not world.permissions(loc) & PERMISSION_UPDATE:
                return dav_error(403, "Forbidden", "No update permission")
            world.write(loc.node, req.body, req.headers.get("content-type"), when, actor=uid)
            node, status = loc.node, 204
        else:
            if not world.permissions(parent) & PERMISSION_CREATE:
                return dav_error(403, "Forbidden", "No create permission")
            node = world.create(
                parent.node, name, False, req.body, req.headers.get("content-type"), when, actor=uid
            )
            status = 201
        return Response(
            status,
            headers=[
                ("OC-ETag", f'"{node.etag}"'),
                ("ETag", f'"{node.etag}"'),
                ("OC-FileId", padded_id(node.fileid)),
                *extra,
            ],
        )


def _move(world: World, req: Request, uid: str, loc: Located | None, rel: str) -> Response:
    if loc is None:
        return not_found(rel)
    target = unquote(urlsplit(req.headers.get("destination", "")).path)
    base = f"{PREFIX}/files/{uid}/"
    if not target.startswith(base):
        return dav_error(502, "BadGateway", "The destination is not this user's files")
    dest_rel = target[len(base) :].strip("/")
    dest_parent_rel, _, dest_name = dest_rel.rpartition("/")
    dest_parent = world.locate(uid, dest_parent_rel)
    if dest_parent is None or not dest_parent.node.is_dir:
        return dav_error(409, "Conflict", "The destination's parent does not exist")
    existing = world.locate(uid, dest_rel)
    if existing is not None and req.headers.get("overwrite", "T").upper() == "F":
        return dav_error(412, "PreconditionFailed", "The destination exists")
    if existing is not None:
        world.delete(existing.node, actor=uid)
    node = world.move(loc.node, dest_parent.node, dest_name, actor=uid)
    return Response(
        204 if existing else 201,
        headers=[("OC-ETag", f'"{node.etag}"'), ("OC-FileId", padded_id(node.fileid))],
    )


def propfind_root(world: World, req: Request, uid: str) -> Response:
    """PROPFIND /remote.php/dav/: the collections, and who is asking (RFC 5397)."""
    want_depth = depth(req, "clamp")
    if isinstance(want_depth, Response):
        return want_depth
    principal = f"{PREFIX}/principals/users/{quote(uid, safe='')}/"
    values: dict[QName, str] = {
        (DAV, "current-user-principal"): tag((DAV, "href"), text(principal)),
        (DAV, "resourcetype"): tag((DAV, "collection")),
        (DAV, "principal-collection-set"): tag((DAV, "href"), f"{PREFIX}/principals/"),
    }
    return _simple(
        req,
        f"{PREFIX}/",
        values,
        want_depth,
        ["files", "calendars", "principals", "systemtags", "systemtags-relations"],
    )


def propfind_principal(world: World, req: Request, uid: str, who: str) -> Response:
    user = world.users.get(who)
    if user is None:
        return not_found(who)
    principal = f"{PREFIX}/principals/users/{quote(who, safe='')}/"
    values: dict[QName, str] = {
        (DAV, "displayname"): text(user.display_name),
        (DAV, "resourcetype"): tag((DAV, "principal")),
        (DAV, "principal-URL"): tag((DAV, "href"), text(principal)),
        (DAV, "current-user-principal"): tag(
            (DAV, "href"), text(f"{PREFIX}/principals/users/{quote(uid, safe='')}/")
        ),
        (CAL, "calendar-home-set"): tag(
            (DAV, "href"), text(f"{PREFIX}/calendars/{quote(who, safe='')}/")
        ),
        (SABRE, "email-address"): text(user.email),
    }
    return _simple(req, principal, values, 0, [])


def _simple(
    req: Request, url: str, values: dict[QName, str], want_depth: int, children: list[str]
) -> Response:
    try:
        wanted = requested_props(parse_xml(req.body))
    except ValueError as e:
        return dav_error(400, "BadRequest", str(e))
    ms = Multistatus()
    names = wanted if wanted is not None else list(values)
    ms.add(
        url, [(n, values[n]) for n in names if n in values], [n for n in names if n not in values]
    )
    for child in children if want_depth else []:
        found = [((DAV, "resourcetype"), tag((DAV, "collection")))]
        ms.add(
            f"{url}{child}/",
            [f for f in found if wanted is None or f[0] in wanted],
            [n for n in (wanted or []) if n != (DAV, "resourcetype")],
        )
    return ms.response()
