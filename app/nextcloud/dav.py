"""WebDAV bodies the connector sends and the multistatus answers it reads, as entries.

The properties follow Nextcloud's "Basic APIs" page (WebDAV): d:getetag, d:getlastmodified,
d:getcontentlength, d:getcontenttype, d:resourcetype, oc:fileid, oc:owner-id, oc:size,
nc:system-tags, nc:is-encrypted. A generic WebDAV server (WsgiDAV, Apache) answers the d:
ones and 404s the rest: an entry then has no fileid (its path stands in) and a folder may
have no ETag at all (the walker lists such folders in full)."""

from collections.abc import Iterator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from urllib.parse import unquote, urlsplit

from lxml import etree

from app.nextcloud.errors import Refused

DAV, OC, NC = "DAV:", "http://owncloud.org/ns", "http://nextcloud.org/ns"
NAMESPACES = {"d": DAV, "oc": OC, "nc": NC}

WALK_BODY = (
    '<?xml version="1.0"?>'
    '<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" '
    'xmlns:nc="http://nextcloud.org/ns"><d:prop>'
    "<d:getetag/><d:getlastmodified/><d:getcontentlength/><d:getcontenttype/>"
    "<d:resourcetype/><oc:fileid/><oc:owner-id/><oc:size/><nc:system-tags/>"
    "<nc:is-encrypted/><nc:is-mount-root/></d:prop></d:propfind>"
)
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def files_root(user_id: str) -> str:
    """The URL path of a Nextcloud user's files."""
    return f"/remote.php/dav/files/{user_id}"


@dataclass(frozen=True)
class DavEntry:
    """One node of a PROPFIND answer. `path` is relative to the root that was listed, without
    leading or trailing '/' ("" for that root)."""

    path: str
    is_folder: bool
    etag: str | None
    fileid: str | None
    size: int | None
    modified_at: int
    content_type: str | None
    owner: str | None
    tags: tuple[str, ...]
    encrypted: bool
    mount_root: bool = False  # where a share received by the user is mounted

    @property
    def name(self) -> str:
        return self.path.rpartition("/")[2]

    @property
    def key(self) -> str:
        """What identifies the node across moves: the fileid, or the path where there is none."""
        return self.fileid or f"path:{self.path}"


def parse_multistatus(body: bytes, root_path: str) -> list[DavEntry]:
    """The entries of a 207 answer; `root_path` is the URL path of the listed root (the
    user's DAV files home), which each href is made relative to."""
    try:
        tree = etree.fromstring(body, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise Refused(f"a PROPFIND answer that is not XML: {exc}") from exc
    root = unquote(root_path).rstrip("/")
    return [entry for entry in _entries(tree, root) if entry is not None]


def _entries(tree: etree._Element, root: str) -> Iterator[DavEntry | None]:
    for response in tree.iterfind("d:response", NAMESPACES):
        href = unquote(urlsplit(response.findtext("d:href", "", NAMESPACES)).path)
        if not href.startswith(root):
            yield None
            continue
        props: dict[str, etree._Element] = {}
        for propstat in response.iterfind("d:propstat", NAMESPACES):
            if "200" not in propstat.findtext("d:status", "", NAMESPACES):
                continue
            for prop in propstat.iterfind("d:prop/*", NAMESPACES):
                props[etree.QName(prop).localname] = prop
        yield _entry(href[len(root) :].strip("/"), props)


def _entry(path: str, props: dict[str, "etree._Element"]) -> DavEntry:
    def text(name: str) -> str | None:
        element = props.get(name)
        value = element.text if element is not None else None
        return value.strip() if value and value.strip() else None

    resourcetype = props.get("resourcetype")
    is_folder = (
        resourcetype is not None and resourcetype.find("d:collection", NAMESPACES) is not None
    )
    tag_list = props.get("system-tags")
    tags = (
        [] if tag_list is None else [t.text.strip() for t in tag_list if t.text and t.text.strip()]
    )
    size = text("getcontentlength") or text("size")
    return DavEntry(
        path=path,
        is_folder=is_folder,
        etag=(text("getetag") or "").strip('"') or None,
        fileid=text("fileid"),
        size=int(size) if size and size.isdigit() else None,
        modified_at=_http_date(text("getlastmodified")),
        content_type=text("getcontenttype"),
        owner=text("owner-id"),
        tags=tuple(tags),
        encrypted=text("is-encrypted") in ("1", "true"),
        mount_root=text("is-mount-root") == "true",
    )


def _http_date(value: str | None) -> int:
    if not value:
        return 0
    try:
        return int(parsedate_to_datetime(value).timestamp())
    except (TypeError, ValueError):
        return 0


def principal_href(body: bytes) -> str:
    """The current-user-principal's href in a PROPFIND answer."""
    try:
        tree = etree.fromstring(body, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise Refused(f"a PROPFIND answer that is not XML: {exc}") from exc
    href = tree.findtext(".//d:current-user-principal/d:href", None, NAMESPACES)
    if not href:
        raise Refused("no current-user-principal in the answer")
    return href
