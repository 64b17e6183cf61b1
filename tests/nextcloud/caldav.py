"""CalDAV under /remote.php/dav/calendars/<uid>/ as Nextcloud's dav app serves it.

Follows RFC 4791 (calendar collections, REPORT calendar-query and calendar-multiget returning
<cal:calendar-data>), RFC 6578 (REPORT sync-collection, <d:sync-token>, 403 valid-sync-token
for an unknown token) and Nextcloud's CalDavBackend (apps/dav/lib/CalDAV/CalDavBackend.php in
nextcloud/server): each calendar's {http://calendarserver.org/ns/}getctag and {DAV:}sync-token
are "http://sabre.io/ns/sync/<n>" with n counting changes; a calendar shared with a user shows
in their home as "<uri>_shared_by_<owner uid>" with oc:owner-principal and oc:read-only; the
owner sees its sharees in oc:invite (apps/dav/lib/DAV/Sharing/Xml/Invite.php: oc:user with
d:href "principal:principals/users/<uid>", oc:common-name, oc:invite-accepted, oc:access
read or read-write). A calendar home also holds inbox/, outbox/ and trashbin/, which are not
calendars (no cal:calendar in their resourcetype). Calendar object events go to webhook
listeners in the shape of the webhook_listeners documentation (CalendarObjectCreatedEvent,
...UpdatedEvent, ...DeletedEvent with calendarId, calendarData, shares, objectData).
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

from tests.nextcloud.model import World
from tests.nextcloud.web import (
    CAL,
    CS,
    DAV,
    OC,
    Multistatus,
    QName,
    Request,
    Response,
    dav_error,
    http_date,
    parse_xml,
    qname,
    requested_props,
    tag,
    text,
)

PREFIX = "/remote.php/dav/calendars"
SYNC = "http://sabre.io/ns/sync/"
APPLE = "http://apple.com/ns/ical/"


@dataclass(eq=False)
class CalObject:
    uri: str
    data: str
    mtime: int
    id: int

    @property
    def etag(self) -> str:
        return '"' + hashlib.md5(self.data.encode()).hexdigest() + '"'


@dataclass(eq=False)
class Calendar:
    id: int
    uri: str
    owner: str
    displayname: str
    color: str = "#0082c9"
    components: tuple[str, ...] = ("VEVENT", "VTODO")
    synctoken: int = 1
    objects: dict[str, CalObject] = field(default_factory=dict)
    changes: list[tuple[int, str]] = field(default_factory=list)  # (token before, uri)
    shares: dict[str, bool] = field(default_factory=dict)  # principal -> read only


def vevent(
    uid: str, summary: str, dtstart: str, dtend: str | None = None, description: str = ""
) -> str:
    """A minimal VCALENDAR holding one VEVENT (dates as 20260102T100000Z)."""
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//Astrolabe//NC dialect//EN",
        "BEGIN:VEVENT",
        f"UID:{uid}",
        f"DTSTAMP:{dtstart}",
        f"DTSTART:{dtstart}",
        f"DTEND:{dtend or dtstart}",
        f"SUMMARY:{summary}",
    ]
    if description:
        lines.append(f"DESCRIPTION:{description}")
    return "\r\n".join([*lines, "END:VEVENT", "END:VCALENDAR", ""])


class CalDav:
    def __init__(self, world: World) -> None:
        self.world = world
        self.installed = True
        self.calendars: dict[int, Calendar] = {}
        self._ids = itertools.count(1)

    # control API ---------------------------------------------------------------------------

    def add_calendar(
        self,
        owner: str,
        uri: str,
        displayname: str | None = None,
        components: tuple[str, ...] = ("VEVENT", "VTODO"),
    ) -> Calendar:
        with self.world.lock:
            cal = Calendar(next(self._ids), uri, owner, displayname or uri, components=components)
            self.calendars[cal.id] = cal
            return cal

    def put_event(self, cal: Calendar, uri: str, ical: str, actor: str | None = None) -> CalObject:
        with self.world.lock:
            created = uri not in cal.objects
            obj = CalObject(uri, ical, self.world.clock.now(), next(self._ids))
            if not created:
                obj.id = cal.objects[uri].id
            cal.objects[uri] = obj
            self._changed(cal, uri, "Created" if created else "Updated", obj, actor)
            return obj

    def delete_event(self, cal: Calendar, uri: str, actor: str | None = None) -> None:
        with self.world.lock:
            obj = cal.objects.pop(uri)
            self._changed(cal, uri, "Deleted", obj, actor)

    def share(self, cal: Calendar, principal: str, read_only: bool = True) -> None:
        """Share with "principals/users/<uid>" or "principals/groups/<gid>"."""
        with self.world.lock:
            cal.shares[principal] = read_only
            cal.synctoken += 1

    def _changed(
        self, cal: Calendar, uri: str, kind: str, obj: CalObject, actor: str | None
    ) -> None:
        cal.changes.append((cal.synctoken, uri))
        cal.synctoken += 1
        self.world.emit(
            f"OCP\\Calendar\\Events\\CalendarObject{kind}Event",
            actor or cal.owner,
            calendarId=cal.id,
            calendarData={
                "id": cal.id,
                "uri": cal.uri,
                f"{{{CS}}}getctag": self.ctag(cal),
                "{http://sabredav.org/ns}sync-token": cal.synctoken,
            },
            shares=[{"href": f"principal:{p}", "readOnly": ro} for p, ro in cal.shares.items()],
            objectData={
                "id": obj.id,
                "uri": uri,
                "lastmodified": obj.mtime,
                "etag": obj.etag.strip('"'),
                "calendarid": cal.id,
                "size": len(obj.data),
                "component": "VEVENT",
                "classification": 0,
            },
        )

    # views -----------------------------------------------------------------------------------

    def ctag(self, cal: Calendar) -> str:
        return f"{SYNC}{cal.synctoken}"

    def home(self, uid: str) -> dict[str, Calendar]:
        """The calendars in uid's home by their URI there (own, then shared with them)."""
        user = self.world.users[uid]
        principals = {f"principals/users/{uid}"} | {f"principals/groups/{g}" for g in user.groups}
        out = {c.uri: c for c in self.calendars.values() if c.owner == uid}
        for cal in self.calendars.values():
            if cal.owner != uid and principals & set(cal.shares):
                out[f"{cal.uri}_shared_by_{cal.owner}"] = cal
        return out

    def _read_only(self, cal: Calendar, uid: str) -> bool:
        user = self.world.users[uid]
        mine = [
            ro
            for p, ro in cal.shares.items()
            if p == f"principals/users/{uid}"
            or p in {f"principals/groups/{g}" for g in user.groups}
        ]
        return all(mine) if mine else False

    def _cal_props(self, uid: str, cal: Calendar) -> dict[QName, str]:
        shared = cal.owner != uid
        rtype = tag((DAV, "collection")) + tag((CAL, "calendar"))
        if shared:
            rtype += tag((CS, "shared"))
        elif cal.shares:
            rtype += tag((CS, "shared-owner"))
        props: dict[QName, str] = {
            (DAV, "resourcetype"): rtype,
            (DAV, "displayname"): text(cal.displayname),
            (CS, "getctag"): self.ctag(cal),
            (DAV, "sync-token"): self.ctag(cal),
            (CAL, "supported-calendar-component-set"): "".join(
                f'<cal:comp name="{c}"/>' for c in cal.components
            ),
            (OC, "owner-principal"): f"principals/users/{quote(cal.owner)}",
            (APPLE, "calendar-color"): text(cal.color),
        }
        if shared:
            props[(OC, "read-only")] = "1" if self._read_only(cal, uid) else "0"
        else:
            users = []
            for principal, ro in cal.shares.items():
                who = principal.rsplit("/", 1)[-1]
                user = self.world.users.get(who)
                access = tag((OC, "read")) if ro else tag((OC, "read-write"))
                users.append(
                    tag(
                        (OC, "user"),
                        tag((DAV, "href"), f"principal:{text(principal)}")
                        + tag((OC, "common-name"), text(user.display_name if user else who))
                        + tag((OC, "invite-accepted"))
                        + tag((OC, "access"), access),
                    )
                )
            props[(OC, "invite")] = "".join(users)
        return props

    def _obj_props(self, obj: CalObject, with_data: bool) -> dict[QName, str]:
        props: dict[QName, str] = {
            (DAV, "getetag"): text(obj.etag),
            (DAV, "getcontenttype"): "text/calendar; charset=utf-8; component=vevent",
            (DAV, "getlastmodified"): http_date(obj.mtime),
            (DAV, "getcontentlength"): str(len(obj.data.encode())),
            (DAV, "resourcetype"): "",
        }
        if with_data:
            props[(CAL, "calendar-data")] = text(obj.data)
        return props

    # HTTP ---------------------------------------------------------------------------------

    def handle(self, req: Request, rest: str) -> Response:
        """rest: "<uid>/[<calendar>/[<object>]]" below /remote.php/dav/calendars/."""
        assert req.user is not None
        uid = req.user.uid
        parts = [unquote(p) for p in rest.split("/") if p]
        if not parts or parts[0] != uid:
            return dav_error(404, "NotFound", "Principal not found")
        try:
            root = parse_xml(req.body)
        except ValueError as e:
            return dav_error(400, "BadRequest", str(e))
        with self.world.lock:
            home = self.home(uid)
            base = f"{PREFIX}/{quote(uid)}/"
            if len(parts) == 1:
                if req.method != "PROPFIND":
                    return dav_error(405, "MethodNotAllowed", "Not allowed on a calendar home")
                return self._propfind_home(req, uid, home, base, requested_props(root))
            cal = home.get(parts[1])
            if cal is None:
                return dav_error(404, "NotFound", f"Node with name '{parts[1]}' could not be found")
            cal_url = f"{base}{quote(parts[1])}/"
            if len(parts) == 3:
                obj = cal.objects.get(parts[2])
                if obj is None:
                    return dav_error(404, "NotFound", "Calendar object not found")
                if req.method in ("GET", "HEAD"):
                    body = b"" if req.method == "HEAD" else obj.data.encode()
                    return Response(
                        200,
                        body,
                        [("Content-Type", "text/calendar; charset=utf-8"), ("ETag", obj.etag)],
                    )
                ms = Multistatus()
                self._add(
                    ms, cal_url + quote(obj.uri), self._obj_props(obj, False), requested_props(root)
                )
                return ms.response()
            if req.method == "PROPFIND":
                ms = Multistatus()
                wanted = requested_props(root)
                self._add(ms, cal_url, self._cal_props(uid, cal), wanted)
                if req.headers.get("depth", "1") != "0":
                    for obj in cal.objects.values():
                        self._add(ms, cal_url + quote(obj.uri), self._obj_props(obj, False), wanted)
                return ms.response()
            if req.method == "REPORT" and root is not None:
                return self._report(root, cal, cal_url)
            return dav_error(405, "MethodNotAllowed", f"{req.method} is not supported here")

    def _add(
        self, ms: Multistatus, url: str, values: dict[QName, str], wanted: list[QName] | None
    ) -> None:
        names = list(values) if wanted is None else wanted
        ms.add(
            url,
            [(n, values[n]) for n in names if n in values],
            [n for n in names if n not in values],
        )

    def _propfind_home(
        self,
        req: Request,
        uid: str,
        home: dict[str, Calendar],
        base: str,
        wanted: list[QName] | None,
    ) -> Response:
        ms = Multistatus()
        self._add(ms, base, {(DAV, "resourcetype"): tag((DAV, "collection"))}, wanted)
        if req.headers.get("depth", "1") == "0":
            return ms.response()
        for name, cal in home.items():
            self._add(ms, f"{base}{quote(name)}/", self._cal_props(uid, cal), wanted)
        others = {
            "inbox": tag((CAL, "schedule-inbox")),
            "outbox": tag((CAL, "schedule-outbox")),
            "trashbin": "<nc:trash-bin/>",
        }
        for name, kind in others.items():
            self._add(
                ms,
                f"{base}{name}/",
                {(DAV, "resourcetype"): tag((DAV, "collection")) + kind},
                wanted,
            )
        return ms.response()

    def _report(self, root: object, cal: Calendar, cal_url: str) -> Response:
        from lxml import etree

        assert isinstance(root, etree._Element)
        kind = qname(root)
        wanted = requested_props(root)
        with_data = wanted is not None and (CAL, "calendar-data") in wanted
        ms = Multistatus()
        if kind == (CAL, "calendar-query"):
            comps = {c.get("name") for c in root.iter(f"{{{CAL}}}comp-filter")} - {"VCALENDAR"}
            for obj in cal.objects.values():
                if not comps or any(f"BEGIN:{c}" in obj.data for c in comps if c):
                    self._add(ms, cal_url + quote(obj.uri), self._obj_props(obj, with_data), wanted)
            return ms.response()
        if kind == (CAL, "calendar-multiget"):
            for href_el in root.findall(f"{{{DAV}}}href"):
                name = unquote((href_el.text or "").rstrip("/").rsplit("/", 1)[-1])
                found = cal.objects.get(name)
                if found is None:
                    ms.add_status(href_el.text or "", "404 Not Found")
                else:
                    self._add(
                        ms, cal_url + quote(found.uri), self._obj_props(found, with_data), wanted
                    )
            return ms.response()
        if kind == (DAV, "sync-collection"):
            token_text = (root.findtext(f"{{{DAV}}}sync-token") or "").strip()
            if token_text:
                if not token_text.startswith(SYNC) or not token_text[len(SYNC) :].isdigit():
                    return dav_error(
                        403, "Forbidden", "Invalid sync token", inner="<d:valid-sync-token/>"
                    )
                since = int(token_text[len(SYNC) :])
                if since > cal.synctoken:
                    return dav_error(
                        403, "Forbidden", "Invalid sync token", inner="<d:valid-sync-token/>"
                    )
                changed = {uri for token, uri in cal.changes if token >= since}
            else:
                changed = set(cal.objects)
            for uri in sorted(changed):
                current = cal.objects.get(uri)
                if current is None:
                    ms.add_status(cal_url + quote(uri), "404 Not Found")
                else:
                    self._add(ms, cal_url + quote(uri), self._obj_props(current, with_data), wanted)
            ms.extra = f"<d:sync-token>{self.ctag(cal)}</d:sync-token>"
            return ms.response()
        return dav_error(415, "ReportNotSupported", f"Report {kind[1]} is not supported")
