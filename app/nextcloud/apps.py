"""Deck cards and calendar events as documents, each app isolated: its root answering 404 raises
AppMissing, a body there that does not parse raises Refused, and one bad board, card, calendar
or event is logged and skipped. 401/403 (Revoked) and no answer (Unreachable) come from the
client and end the app's read."""

import base64
import hashlib
import logging
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from functools import partial
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit

import vobject  # type: ignore[import-untyped]
from lxml import etree

from app.filters.spec import clean_values
from app.ingest.documents import Document
from app.nextcloud.client import NextcloudClient
from app.nextcloud.errors import AppMissing, Refused

log = logging.getLogger(__name__)

DECK_API = "/index.php/apps/deck/api/v1.0"  # Deck's docs/API.md: the legacy base, plain JSON
DECK_HEADERS = {"OCS-APIRequest": "true", "Accept": "application/json"}
DECK_KINDS = {0: "user", 1: "group"}  # Deck's participant types; 7 (a circle) has no reader form
MAX_ID = 256  # DocumentIn's doc_id limit
D, C = "{DAV:}", "{urn:ietf:params:xml:ns:caldav}"
CS, OC = "{http://calendarserver.org/ns/}", "{http://owncloud.org/ns}"
_NS = " ".join(f'xmlns:{p}="{ns[1:-1]}"' for p, ns in (("d", D), ("c", C), ("cs", CS), ("oc", OC)))
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
_Document = partial(Document, file_path=None, mime_type=None)
_PROPFIND = '<?xml version="1.0"?><d:propfind ' + _NS + "><d:prop>{}</d:prop></d:propfind>"
PRINCIPAL_BODY = _PROPFIND.format("<d:current-user-principal/>")
HOME_BODY = _PROPFIND.format("<c:calendar-home-set/>")
CALENDARS_BODY = _PROPFIND.format(
    "<d:resourcetype/><d:displayname/><c:supported-calendar-component-set/>"
    "<oc:owner-principal/><oc:invite/><cs:invite/>"
)
QUERY_BODY = (
    f'<?xml version="1.0"?><c:calendar-query {_NS}><d:prop><d:getetag/><d:getlastmodified/>'
    '<c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR">'
    '<c:comp-filter name="VEVENT"/></c:comp-filter></c:filter></c:calendar-query>'
)


def deck_documents(client: NextcloudClient, user_id: str) -> list[Document]:
    """The live cards of every board `user_id` sees: GET /boards?details=true, then GET
    /boards/{id}/stacks for each board not deleted (1 + B requests). Archived and deleted
    cards are not in the stacks' listing (Deck lists them under stacks/archived); cards of an
    archived board are kept, as Deck's own search keeps them."""
    boards = _deck_json(client, "/boards", {"details": "true"})
    if not isinstance(boards, list):
        raise Refused("GET deck boards: not a list")
    docs: list[Document] = []
    for board in boards:
        if not isinstance(board, dict) or board.get("deletedAt") or "id" not in board:
            continue
        try:
            stacks = _deck_json(client, f"/boards/{int(board['id'])}/stacks")
            docs.extend(_board_cards(client.base_url, board, stacks))
        except (AppMissing, Refused, TypeError, ValueError) as exc:
            log.warning("deck board %s of %s skipped: %s", board.get("id"), user_id, exc)
    return docs


def _deck_json(client: NextcloudClient, path: str, params: Mapping[str, str] | None = None) -> Any:
    response = client.request("GET", DECK_API + path, headers=DECK_HEADERS, params=params)
    if response.status_code >= 400:
        kind = AppMissing if response.status_code == 404 else Refused
        raise kind(f"GET deck {path}: HTTP {response.status_code}")
    try:
        return response.json()
    except ValueError as exc:
        raise Refused(f"GET deck {path}: not JSON") from exc


def _uid(participant: Any) -> str:
    """A Deck user or group: {"uid": ...} in the API's examples, a bare id in older ones."""
    return str(participant.get("uid") if isinstance(participant, dict) else participant or "")


def _board_cards(base: str, board: dict[str, Any], stacks: Any) -> Iterator[Document]:
    owner = _uid(board.get("owner"))
    if not owner or not isinstance(stacks, list):
        raise ValueError("a board without owner, or stacks that are not a list")
    rules = [a for a in board.get("acl") or [] if isinstance(a, dict)]
    rules = [a for a in rules if a.get("type") in DECK_KINDS]
    readers = [f"{DECK_KINDS[a['type']]}:{_uid(a.get('participant'))}" for a in rules]
    acl = clean_values([r for r in readers if not r.endswith(":")])  # the owner is implied
    for stack in (s for s in stacks if isinstance(s, dict) and not s.get("deletedAt")):
        for card in stack.get("cards") or []:
            try:
                if card.get("archived") or card.get("deletedAt"):
                    continue
                yield _Document(
                    doc_type="deck_card",
                    doc_id=str(int(card["id"])),
                    title=str(card.get("title") or "")[:1000],
                    content=str(card.get("description") or ""),
                    owner=owner,
                    modified_at=_unix(card.get("lastModified")),
                    tags=clean_values([str(label["title"]) for label in card.get("labels") or []]),
                    category=str(board.get("title") or "")[:256] or None,
                    acl=acl,
                    # Deck's route page#redirectToCard ('/card/{cardId}' in appinfo/routes.php):
                    # it opens the card on whichever board it is now.
                    url=f"{base}/index.php/apps/deck/card/{int(card['id'])}",
                )
            except (AttributeError, KeyError, TypeError, ValueError) as exc:
                log.warning("deck card skipped (board %s): %s", board.get("id"), exc)


class _Calendar(NamedTuple):
    path: str  # to request (below the client's base URL)
    owner: str
    uri: str  # the owner's name for it: the same for every user it is shared with
    name: str
    acl: tuple[str, ...]


def calendar_documents(
    client: NextcloudClient, user_id: str, dav_root: str = "/remote.php/dav/"
) -> list[Document]:
    """One document per event UID in every VEVENT calendar of `user_id`'s calendar home:
    PROPFIND the current-user-principal under dav_root, its calendar-home-set, the home at
    Depth 1, then one REPORT calendar-query per calendar (3 + C requests)."""
    principal = _href(_dav(client, "PROPFIND", dav_root, "0", PRINCIPAL_BODY))
    home = _href(_dav(client, "PROPFIND", _path(client, principal), "0", HOME_BODY))
    listing = _dav(client, "PROPFIND", _path(client, home), "1", CALENDARS_BODY)
    docs: dict[str, Document] = {}
    for href, props in _responses(listing):
        if (calendar := _calendar(client, href, props, user_id)) is None:
            continue
        try:
            answer = _dav(client, "REPORT", calendar.path, "1", QUERY_BODY)
        except (AppMissing, Refused) as exc:
            log.warning("calendar %s of %s skipped: %s", href, user_id, exc)
            continue
        for obj_href, obj in _responses(answer):
            if not (data := _text(obj.get(f"{C}calendar-data"))):
                continue
            if "remote.php" in dav_root:  # the Calendar app's link, as Nextcloud's search has it
                b64 = base64.b64encode(urlsplit(obj_href).path.encode()).decode()
                url = f"{client.base_url}/index.php/apps/calendar/edit/{b64}"
            else:  # no Calendar app: the event's own CalDAV URL
                url = client.base_url + _path(client, obj_href)
            fallback = _unix(_text(obj.get(f"{D}getlastmodified")))
            for doc in _events(calendar, data, fallback, url):
                docs.setdefault(doc.doc_id, doc)
    return list(docs.values())


def _dav(client: NextcloudClient, method: str, path: str, depth: str, body: str) -> etree._Element:
    """The multistatus answered; AppMissing on 404, Refused on any other answer."""
    headers = {"Depth": depth, "Content-Type": "application/xml; charset=utf-8"}
    response = client.request(method, path, content=body, headers=headers)
    if response.status_code != 207:
        kind = AppMissing if response.status_code == 404 else Refused
        raise kind(f"{method} {path}: HTTP {response.status_code}")
    try:
        return etree.fromstring(response.content, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise Refused(f"{method} {path}: not XML: {exc}") from exc


def _responses(tree: etree._Element) -> Iterator[tuple[str, dict[str, etree._Element]]]:
    """Each <d:response>'s href and its properties found (200), by Clark name."""
    for response in tree.iterfind(f"{D}response"):
        props: dict[str, etree._Element] = {}
        for propstat in response.iterfind(f"{D}propstat"):
            if " 200 " in (propstat.findtext(f"{D}status") or ""):
                props.update((str(p.tag), p) for p in propstat.iterfind(f"{D}prop/*"))
        yield response.findtext(f"{D}href") or "", props


def _href(tree: etree._Element) -> str:
    for _, props in _responses(tree):
        for element in props.values():
            if href := (element.findtext(f"{D}href") or "").strip():
                return href
    raise AppMissing("no principal or calendar home in the answer")


def _path(client: NextcloudClient, href: str) -> str:
    """An href as a path below the client's base URL (which may have a path of its own)."""
    path, base = urlsplit(href).path, urlsplit(client.base_url).path.rstrip("/")
    return path[len(base) :] if base and path.startswith(base + "/") else path


def _text(element: etree._Element | None) -> str:
    return (element.text or "").strip() if element is not None else ""


def _principal(value: str) -> tuple[str, str] | None:
    """("user", uid) or ("group", gid) from "principal:principals/users/<uid>", an href ..."""
    parts = [unquote(p) for p in value.removeprefix("principal:").split("/") if p]
    for kind, segment in (("user", "users"), ("group", "groups")):
        if segment in parts[:-1]:
            return kind, parts[parts.index(segment) + 1]
    return None


def _calendar(
    client: NextcloudClient, href: str, props: dict[str, etree._Element], user_id: str
) -> _Calendar | None:
    rtype, comps = props.get(f"{D}resourcetype"), props.get(f"{C}supported-calendar-component-set")
    if rtype is None or rtype.find(f"{C}calendar") is None:
        return None  # the home itself, inbox/outbox/trashbin, subscriptions, address books
    if comps is not None and len(comps) and all(c.get("name") != "VEVENT" for c in comps):
        return None  # a task list
    found = _principal(_text(props.get(f"{OC}owner-principal")))  # "principals/users/<uid>"
    owner = found[1] if found and found[0] == "user" else user_id
    uri = unquote(urlsplit(href).path.rstrip("/").rpartition("/")[2])
    uri = uri.removesuffix(f"_shared_by_{owner}") if owner != user_id else uri
    readers = [f"user:{user_id}"] if owner != user_id else []  # a sharee sees no invite list
    for invite in (props.get(f"{OC}invite"), props.get(f"{CS}invite")):
        for sharee in invite if invite is not None else []:
            who = _principal(sharee.findtext(f"{D}href") or "")
            declined = any(etree.QName(c).localname == "invite-declined" for c in sharee.iter())
            if who and who != ("user", owner) and not declined:
                readers.append(f"{who[0]}:{who[1]}")
    name = _text(props.get(f"{D}displayname")) or uri
    return _Calendar(_path(client, href), owner, uri, name[:256], clean_values(sorted(readers)))


def _events(calendar: _Calendar, data: str, fallback: int, url: str) -> Iterator[Document]:
    """The object's events, one per UID (a recurring event's master, else its first moved
    instance); a VEVENT that does not parse is skipped, the others kept."""
    try:
        vcalendar = vobject.readOne(data, transform=False)
        for vtimezone in vcalendar.contents.get("vtimezone", []):
            vtimezone.transformToNative()  # registers its TZID for the events' dates
    except Exception as exc:  # vobject raises its ParseError and plain ValueErrors alike
        log.warning("calendar object skipped in %s: %s", calendar.path, exc)
        return
    chosen: dict[str, Any] = {}
    for vevent in vcalendar.contents.get("vevent", []):
        try:
            vevent.transformChildrenToNative()
            uid = str(vevent.uid.value).strip()
        except Exception as exc:
            log.warning("VEVENT skipped in %s: %s", calendar.path, exc)
            continue
        master = "recurrence-id" not in vevent.contents
        if uid and (uid not in chosen or (master and "recurrence-id" in chosen[uid].contents)):
            chosen[uid] = vevent
    for uid, vevent in chosen.items():
        doc_id = f"{calendar.owner}/{calendar.uri}/{uid}"
        if len(doc_id) > MAX_ID:
            doc_id = "sha256:" + hashlib.sha256(doc_id.encode()).hexdigest()
        stamp = _value(vevent, "last-modified") or _value(vevent, "dtstamp")
        parts = [str(_value(vevent, n) or "").strip() for n in ("description", "location")]
        yield _Document(
            doc_type="event",
            doc_id=doc_id,
            title=str(_value(vevent, "summary") or "")[:1000],
            content="\n".join(p for p in [*parts, _when(_value(vevent, "dtstart"))] if p),
            owner=calendar.owner,
            modified_at=_unix(stamp) or fallback,
            tags=(),
            category=calendar.name,
            acl=calendar.acl,
            url=url,
        )


def _value(component: Any, name: str) -> Any:
    lines = component.contents.get(name)
    return lines[0].value if lines else None


def _when(value: Any) -> str:
    if isinstance(value, datetime):
        zone = value.tzname() if value.tzinfo else None
        return f"{value:%Y-%m-%d %H:%M}" + (f" {zone}" if zone else "")
    return value.isoformat() if isinstance(value, date) else ""


def _unix(value: Any) -> int:
    """Unix seconds from Deck's int or ISO-8601, an iCalendar date(-time) (floating: as UTC)
    or an HTTP date; 0 when there is none."""
    try:
        if isinstance(value, str) and value.strip():
            text = value.strip()
            parse = parsedate_to_datetime if text[0].isalpha() else datetime.fromisoformat
            value = int(text) if text.isdigit() else parse(text)
        if isinstance(value, datetime):
            return int((value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp())
        if isinstance(value, date):
            return int(datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp())
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0
    except (TypeError, ValueError, OverflowError):
        return 0
