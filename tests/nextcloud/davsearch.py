"""SEARCH on /remote.php/dav/, REPORT oc:filter-files, and the system tag collections.

SEARCH follows https://docs.nextcloud.com/server/latest/developer_manual/client_apis/WebDAV/search.html
(RFC 5323 basicsearch: select, a scope /files/<uid>[/folder], where, orderby) and what the
code behind it does (apps/dav/lib/Files/FileSearchBackend.php in nextcloud/server and
icewind1991/SearchDAV): the request is only handled with a text/xml or application/xml
Content-Type (otherwise sabre/dav answers 501); paging is <d:limit><d:nresults> plus
<ns:firstresult> in the namespace https://github.com/icewind1991/SearchDAV/ns (src/XML/Limit.php);
without nresults at most 100 results come back; a datetime literal is a Unix timestamp or an
ISO 8601 (ATOM) date, anything else counts as 0; the scope folder itself is not a result; an
eq on oc:owner-id (only the asking user) limits the search to the user's own files.
REPORT oc:filter-files and its oc:favorite rule follow the basic APIs page ("Listing
favorites"); the oc:systemtag rule, /remote.php/dav/systemtags/ and
/remote.php/dav/systemtags-relations/files/<fileid> follow apps/dav/lib/SystemTag/ in
nextcloud/server (SystemTagPlugin's oc:id, oc:display-name, oc:user-visible,
oc:user-assignable, oc:can-assign).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from lxml import etree

from tests.nextcloud.dav import PREFIX, add_node, not_found
from tests.nextcloud.model import FOLDER_MIME, Located, Node, SystemTag, World
from tests.nextcloud.web import (
    DAV,
    NC,
    OC,
    SEARCHDAV,
    Multistatus,
    QName,
    Request,
    Response,
    dav_error,
    parse_xml,
    qname,
    requested_props,
    text,
)

DEFAULT_LIMIT = 100
_DATETIME = {(DAV, "getlastmodified"), (DAV, "creationdate"), (NC, "upload_time")}
_INTEGER = {(OC, "size"), (OC, "fileid")}
_VALUES: dict[QName, Callable[[Node], Any]] = {
    (DAV, "displayname"): lambda n: n.name,
    (DAV, "getcontenttype"): lambda n: FOLDER_MIME if n.is_dir else n.content_type,
    (DAV, "getlastmodified"): lambda n: n.mtime,
    (DAV, "creationdate"): lambda n: n.ctime,
    (NC, "upload_time"): lambda n: n.ctime,
    (OC, "size"): lambda n: n.size,
    (OC, "fileid"): lambda n: n.fileid,
    (OC, "favorite"): lambda n: False,
}


class SearchError(ValueError):
    pass


def _cast(prop: QName, value: str) -> Any:
    if prop in _DATETIME:
        if re.fullmatch(r"-?\d+(\.\d+)?", value.strip()):
            return max(0, int(float(value)))
        try:
            return int(datetime.fromisoformat(value.strip()).timestamp())
        except ValueError:
            return 0
    if prop in _INTEGER:
        try:
            return int(value)
        except ValueError as e:
            raise SearchError(f"Invalid property value for {{{prop[0]}}}{prop[1]}") from e
    if prop == (OC, "favorite"):
        return value == "yes"
    return value


def _compile(op: etree._Element, uid: str, home: list[bool]) -> Callable[[Node], bool]:
    kind = qname(op)[1] if qname(op)[0] == DAV else "?"
    args = [c for c in op if isinstance(c.tag, str)]
    if kind in ("and", "or"):
        parts = [_compile(a, uid, home) for a in args]
        return (
            (lambda n: all(p(n) for p in parts))
            if kind == "and"
            else (lambda n: any(p(n) for p in parts))
        )
    if kind == "not":
        inner = _compile(args[0], uid, home)
        return lambda n: not inner(n)
    if kind == "is-collection":
        return lambda n: n.is_dir
    prop_el = op.find(f"{{{DAV}}}prop")
    if prop_el is None or len(prop_el) == 0:
        raise SearchError(f"Invalid argument 1 for {kind} operation, expected property")
    prop = qname(prop_el[0])
    if prop == (OC, "owner-id") and kind == "eq":
        if op.findtext(f"{{{DAV}}}literal") != uid:
            raise SearchError(
                "Invalid search value for '{http://owncloud.org/ns}owner-id', "
                "only the current user id is allowed"
            )
        home.append(True)
        return lambda n: True
    getter = _VALUES.get(prop)
    if getter is None:
        raise SearchError(f"Unsupported property for search or order: {{{prop[0]}}}{prop[1]}")
    if kind == "is-defined":
        return lambda n: True
    literal = _cast(prop, op.findtext(f"{{{DAV}}}literal") or "")
    compare: dict[str, Callable[[Any], bool]] = {
        "eq": lambda v: v == literal,
        "gt": lambda v: v > literal,
        "gte": lambda v: v >= literal,
        "lt": lambda v: v < literal,
        "lte": lambda v: v <= literal,
    }
    if kind == "like":
        pattern = "".join(
            ".*" if c == "%" else "." if c == "_" else re.escape(c) for c in str(literal)
        )
        rx = re.compile(pattern, re.IGNORECASE | re.DOTALL)
        return lambda n: rx.fullmatch(str(getter(n))) is not None
    if kind not in compare:
        raise SearchError(f"Unsupported operation {kind}")
    test = compare[kind]
    return lambda n: test(getter(n))


def _orders(basic: etree._Element) -> list[tuple[QName, bool]]:
    orderby = basic.find(f"{{{DAV}}}orderby")
    if orderby is None:
        return []
    orders = orderby.findall(f"{{{DAV}}}order") or [orderby]
    out = []
    for order in orders:
        prop_el = order.find(f"{{{DAV}}}prop")
        if prop_el is None or len(prop_el) == 0:
            continue
        prop = qname(prop_el[0])
        if prop not in _VALUES or prop == (OC, "fileid"):
            raise SearchError(f"Unsupported property for search or order: {prop[1]}")
        out.append((prop, order.find(f"{{{DAV}}}descending") is not None))
    return out


def _sort_key(prop: QName) -> Callable[[Located], Any]:
    getter = _VALUES[prop]
    return lambda hit: getter(hit.node)


def _walk(world: World, uid: str, loc: Located, own_only: bool) -> list[Located]:
    out: list[Located] = []
    stack = [loc]
    while stack:
        here = stack.pop()
        for child in world.children(uid, here):
            if own_only and child.share is not None:
                continue
            out.append(child)
            if child.node.is_dir:
                stack.append(child)
    return out


def search(world: World, req: Request, uid: str) -> Response:
    ctype = req.headers.get("content-type", "")
    if "text/xml" not in ctype and "application/xml" not in ctype:
        return dav_error(
            501,
            "NotImplemented",
            "There was no plugin in the system that was willing to handle this SEARCH method.",
        )
    try:
        root = parse_xml(req.body)
        basic = None if root is None else root.find(f"{{{DAV}}}basicsearch")
        if basic is None:
            raise SearchError("Unexpected document type, expected {DAV:}searchrequest")
        select = basic.find(f"{{{DAV}}}select")
        wanted = requested_props(select) or []
        scope = (basic.findtext(f"{{{DAV}}}from/{{{DAV}}}scope/{{{DAV}}}href") or "").strip()
        scope = scope.removeprefix(PREFIX)
        if not scope.startswith(f"/files/{uid}"):
            raise SearchError("You need to specify a scope inside the user's files")
        home: list[bool] = []
        where = basic.find(f"{{{DAV}}}where")
        match = (
            (lambda n: True) if where is None or len(where) == 0 else _compile(where[0], uid, home)
        )
        orders = _orders(basic)
        nresults = int(basic.findtext(f"{{{DAV}}}limit/{{{DAV}}}nresults") or 0)
        first = int(basic.findtext(f"{{{DAV}}}limit/{{{SEARCHDAV}}}firstresult") or 0)
    except (ValueError, SearchError) as e:
        return dav_error(400, "BadRequest", str(e))
    with world.lock:
        loc = world.locate(uid, scope[len(f"/files/{uid}") :])
        if loc is None or not loc.node.is_dir:
            return dav_error(400, "BadRequest", "Search is only supported on directories")
        hits = [h for h in _walk(world, uid, loc, bool(home)) if match(h.node)]
        hits.sort(key=lambda h: h.node.fileid)
        for prop, descending in reversed(orders):
            hits.sort(key=_sort_key(prop), reverse=descending)
        page = hits[first : first + (nresults or DEFAULT_LIMIT)]
        ms = Multistatus()
        for hit in page:
            add_node(ms, world, uid, hit, wanted)
        return ms.response()


def filter_files(world: World, req: Request, uid: str, rel: str) -> Response:
    """REPORT oc:filter-files: the files below a folder with all the given system tags."""
    try:
        root = parse_xml(req.body)
    except ValueError as e:
        return dav_error(400, "BadRequest", str(e))
    rules = None if root is None else root.find(f"{{{OC}}}filter-rules")
    if root is None or qname(root) != (OC, "filter-files") or rules is None:
        return dav_error(400, "BadRequest", "Missing filter-files and filter-rules")
    tag_ids = {int(t.text or 0) for t in rules.findall(f"{{{OC}}}systemtag")}
    favorites = rules.findtext(f"{{{OC}}}favorite") == "1"
    with world.lock:
        loc = world.locate(uid, rel)
        if loc is None:
            return not_found(rel)
        hits = [
            h for h in _walk(world, uid, loc, False) if tag_ids <= h.node.tags and not favorites
        ]
        ms = Multistatus()
        for hit in hits if tag_ids or favorites else []:
            add_node(ms, world, uid, hit, requested_props(root))
        return ms.response()


def _tag_props(tag: SystemTag) -> list[tuple[QName, str]]:
    flag = {True: "true", False: "false"}
    return [
        ((OC, "id"), str(tag.id)),
        ((OC, "display-name"), text(tag.name)),
        ((OC, "user-visible"), flag[tag.user_visible]),
        ((OC, "user-assignable"), flag[tag.user_assignable]),
        ((OC, "can-assign"), flag[tag.user_assignable]),
    ]


def visible(world: World, uid: str, node: Node) -> bool:
    mounted = {s.node.fileid for s in world.mounts(uid).values()}
    here: Node | None = node
    while here is not None:
        if here.fileid in mounted:
            return True
        here = here.parent
    return node.owner == uid


def systemtags(world: World, req: Request, uid: str, rest: str) -> Response:
    """PROPFIND /systemtags/[<id>] and /systemtags-relations/files/<fileid>[/<id>]."""
    try:
        wanted = requested_props(parse_xml(req.body))
    except ValueError as e:
        return dav_error(400, "BadRequest", str(e))
    parts = [p for p in rest.split("/") if p]
    level = req.headers.get("depth", "1") != "0"
    with world.lock:
        if parts[0] == "systemtags":
            base, tags = f"{PREFIX}/systemtags/", [t for t in world.tags.values() if t.user_visible]
            chosen = parts[1:2]
        else:
            if len(parts) < 3 or parts[1] != "files" or not parts[2].isdigit():
                return not_found(rest)
            node = world.by_id.get(int(parts[2]))
            if node is None or not visible(world, uid, node):
                return not_found(rest)
            base = f"{PREFIX}/systemtags-relations/files/{node.fileid}/"
            tags = [world.tags[i] for i in sorted(node.tags) if world.tags[i].user_visible]
            chosen = parts[3:4]
        ms = Multistatus()
        if chosen:
            hit = [t for t in tags if str(t.id) == chosen[0]]
            if not hit:
                return not_found(rest)
            tags, level = hit, False
            base = base + chosen[0]
        else:
            collection = [((DAV, "resourcetype"), "<d:collection/>")]
            ms.add(base, [p for p in collection if wanted is None or p[0] in wanted], [])
        for t in tags:
            props = _tag_props(t)
            found = [p for p in props if wanted is None or p[0] in wanted]
            names = {p[0] for p in props}
            url = base if chosen else f"{base}{t.id}"
            if level or chosen:
                ms.add(url, found, [n for n in (wanted or []) if n not in names])
        return ms.response()
