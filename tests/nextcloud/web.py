"""Requests, responses and the XML both DAV modules write and read.

Multistatus bodies follow RFC 4918 section 14.16 (https://www.rfc-editor.org/rfc/rfc4918) with
the prefixes Nextcloud (sabre/dav) declares on the root element: d (DAV:), s (sabredav), oc
(http://owncloud.org/ns), nc (http://nextcloud.org/ns), ocs and, for CalDAV, cal and cs; a
property of any other namespace declares its own (x1) as sabre/xml does. Errors are sabre/dav's
<d:error> with <s:exception> and <s:message>, the body Nextcloud's
apps/dav/lib/Connector/Sabre/Server.php writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from lxml import etree

from tests.nextcloud.model import User

DAV = "DAV:"
OC = "http://owncloud.org/ns"
NC = "http://nextcloud.org/ns"
OCS_NS = "http://open-collaboration-services.org/ns"
SABRE = "http://sabredav.org/ns"
CAL = "urn:ietf:params:xml:ns:caldav"
CS = "http://calendarserver.org/ns/"
SEARCHDAV = "https://github.com/icewind1991/SearchDAV/ns"
PREFIXES = {DAV: "d", SABRE: "s", OC: "oc", NC: "nc", OCS_NS: "ocs", CAL: "cal", CS: "cs"}
ROOT_NS = " ".join(f'xmlns:{p}="{ns}"' for ns, p in PREFIXES.items())

QName = tuple[str, str]


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    base_url: str
    user: User | None = None

    def form(self) -> dict[str, Any]:
        """Parameters of a POST/PUT: JSON, or a urlencoded form, over the query string."""
        from urllib.parse import parse_qsl

        params: dict[str, Any] = dict(self.query)
        ctype = self.headers.get("content-type", "")
        if self.body and "json" in ctype:
            loaded = json.loads(self.body)
            if isinstance(loaded, dict):
                params.update(loaded)
        elif self.body:
            params.update(parse_qsl(self.body.decode(), keep_blank_values=True))
        return params


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


def xml_response(status: int, body: str, headers: Iterable[tuple[str, str]] = ()) -> Response:
    return Response(
        status, body.encode(), [("Content-Type", "application/xml; charset=utf-8"), *headers]
    )


def json_response(status: int, data: Any, headers: Iterable[tuple[str, str]] = ()) -> Response:
    return Response(
        status,
        json.dumps(data).encode(),
        [("Content-Type", "application/json; charset=utf-8"), *headers],
    )


def dav_error(
    status: int,
    exception: str,
    message: str,
    headers: Iterable[tuple[str, str]] = (),
    inner: str = "",
) -> Response:
    body = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<d:error xmlns:d="DAV:" xmlns:s="{SABRE}">{inner}'
        f"<s:exception>Sabre\\DAV\\Exception\\{exception}</s:exception>"
        f"<s:message>{escape(message)}</s:message></d:error>\n"
    )
    return xml_response(status, body, headers)


def http_date(ts: int) -> str:
    return formatdate(ts, usegmt=True)


def tag(name: QName, inner: str | None = None) -> str:
    """One element, with its namespace declared on it when the root does not declare it."""
    ns, local = name
    prefix = PREFIXES.get(ns)
    decl = ""
    if prefix is None:
        prefix, decl = "x1", f" xmlns:x1={quoteattr(ns)}"
    if inner is None or inner == "":
        return f"<{prefix}:{local}{decl}/>"
    return f"<{prefix}:{local}{decl}>{inner}</{prefix}:{local}>"


def text(value: object) -> str:
    return escape(str(value))


class Multistatus:
    """A 207 body built response by response (string building: fast for big listings)."""

    def __init__(self, extra: str = "") -> None:
        self.parts = [f'<?xml version="1.0"?>\n<d:multistatus {ROOT_NS}>']
        self.extra = extra

    def add(self, href: str, found: list[tuple[QName, str]], missing: list[QName]) -> None:
        out = [f"<d:response><d:href>{escape(href)}</d:href>"]
        if found:
            props = "".join(tag(n, v) for n, v in found)
            out.append(
                f"<d:propstat><d:prop>{props}</d:prop>"
                "<d:status>HTTP/1.1 200 OK</d:status></d:propstat>"
            )
        if missing:
            props = "".join(tag(n) for n in missing)
            out.append(
                f"<d:propstat><d:prop>{props}</d:prop>"
                "<d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>"
            )
        out.append("</d:response>")
        self.parts.append("".join(out))

    def add_status(self, href: str, status: str) -> None:
        self.parts.append(
            f"<d:response><d:href>{escape(href)}</d:href>"
            f"<d:status>HTTP/1.1 {status}</d:status></d:response>"
        )

    def response(self, headers: Iterable[tuple[str, str]] = ()) -> Response:
        body = "".join(self.parts) + self.extra + "</d:multistatus>\n"
        return xml_response(207, body, headers)


_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def parse_xml(body: bytes) -> etree._Element | None:
    """The request body's root element, None for an empty body; raises ValueError if broken."""
    if not body.strip():
        return None
    try:
        return etree.fromstring(body, parser=_PARSER)
    except etree.XMLSyntaxError as e:
        raise ValueError(str(e)) from e


def qname(element: etree._Element) -> QName:
    q = etree.QName(element)
    return (q.namespace or "", q.localname)


def requested_props(root: etree._Element | None) -> list[QName] | None:
    """The properties a PROPFIND (or REPORT) asks for; None for allprop (or no body)."""
    if root is None or root.find(f"{{{DAV}}}allprop") is not None:
        return None
    prop = root.find(f"{{{DAV}}}prop")
    return [] if prop is None else [qname(p) for p in prop if isinstance(p.tag, str)]
