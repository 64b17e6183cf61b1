"""Reading multistatus answers in the tests, as a client would (no dialect code involved)."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx
from lxml import etree

D = "{DAV:}"
OC = "{http://owncloud.org/ns}"
NC = "{http://nextcloud.org/ns}"
CAL = "{urn:ietf:params:xml:ns:caldav}"
CS = "{http://calendarserver.org/ns/}"


@dataclass
class Entry:
    href: str
    found: dict[str, etree._Element] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)
    status: str | None = None

    def text(self, name: str) -> str:
        return self.found[name].text or ""


def multistatus(body: bytes) -> list[Entry]:
    root = etree.fromstring(body)
    assert root.tag == f"{D}multistatus", root.tag
    out = []
    for response in root.findall(f"{D}response"):
        entry = Entry(response.findtext(f"{D}href") or "", status=response.findtext(f"{D}status"))
        for propstat in response.findall(f"{D}propstat"):
            ok = " 200 " in (propstat.findtext(f"{D}status") or "")
            props = propstat.find(f"{D}prop")
            for prop in props if props is not None else []:
                if ok:
                    entry.found[str(prop.tag)] = prop
                else:
                    entry.missing.add(str(prop.tag))
        out.append(entry)
    return out


def propfind_body(*names: str) -> bytes:
    """A <d:propfind><d:prop> body for Clark names ("{DAV:}getetag")."""
    props = "".join(f'<x:{n.split("}")[1]} xmlns:x="{n[1:].split("}")[0]}"/>' for n in names)
    body = f'<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop>{props}</d:prop></d:propfind>'
    return body.encode()


def propfind(client: httpx.Client, url: str, depth: str = "1", *names: str) -> list[Entry]:
    body = propfind_body(*names) if names else b""
    resp = client.request("PROPFIND", url, headers={"Depth": depth}, content=body)
    assert resp.status_code == 207, (resp.status_code, resp.text)
    return multistatus(resp.content)


def by_href(entries: list[Entry]) -> dict[str, Entry]:
    return {e.href: e for e in entries}
