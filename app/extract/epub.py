"""EPUB 2 and 3 (a ZIP archive of XHTML chapters, read with zipfile and lxml within the archive
limits, as Office files are): each document of the spine, in the reading order the book
declares, is a page (a chapter), its text read as HTML is; a spine item that is no text (an
image) keeps its page number, empty. The title is the package's `dc:title`. A book whose chapters
are encrypted (DRM: listed in META-INF/encryption.xml under an algorithm other than the font
obfuscation EPUB defines) is refused as encrypted."""

import posixpath
import re
import zipfile
from pathlib import Path
from urllib.parse import unquote

from lxml import etree

from app.extract.archive import ArchiveLimits, open_checked
from app.extract.errors import Encrypted, Unreadable
from app.extract.html import html_text
from app.extract.model import Extracted, Format, paged

CONTAINER = "META-INF/container.xml"
ENCRYPTION = "META-INF/encryption.xml"
_CONTAINER_NS = "urn:oasis:names:tc:opendocument:xmlns:container"
_OPF_NS = "http://www.idpf.org/2007/opf"
_DC_NS = "http://purl.org/dc/elements/1.1/"
_ENC_NS = "http://www.w3.org/2001/04/xmlenc#"
# Fonts scrambled so they cannot be lifted from the book (IDPF's and Adobe's schemes): the text
# stays readable.
_FONT_OBFUSCATION = frozenset(
    {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
)
_TEXT_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/x-dtbook+xml"})
_XML_DECLARATION = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*<\?xml[^>]*\?>")
_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True
)


def extract(path: Path, limits: ArchiveLimits) -> Extracted:
    with open_checked(path, limits) as archive:
        package_path = _package_path(archive)
        package = _parse(archive, package_path)
        base = posixpath.dirname(package_path)
        manifest = {
            item.get("id"): (_member(base, item.get("href", "")), item.get("media-type", ""))
            for item in package.iterfind(f"{{{_OPF_NS}}}manifest/{{{_OPF_NS}}}item")
        }
        spine = [
            manifest[ref.get("idref")]
            for ref in package.iterfind(f"{{{_OPF_NS}}}spine/{{{_OPF_NS}}}itemref")
            if ref.get("idref") in manifest
        ]
        if not spine:
            raise Unreadable("the EPUB's package lists no chapters (its spine is empty)")
        locked = _encrypted_members(archive)
        if any(name in locked for name, _ in spine):
            raise Encrypted("the EPUB's chapters are encrypted (DRM): send a copy without DRM")
        chapters = [_chapter(archive, name, media_type) for name, media_type in spine]
        title = package.findtext(f"{{{_OPF_NS}}}metadata/{{{_DC_NS}}}title")
    return paged(Format.EPUB, chapters, title)


def _package_path(archive: zipfile.ZipFile) -> str:
    """Where the package document (.opf) is: container.xml's first rootfile."""
    container = _parse(archive, CONTAINER)
    for rootfile in container.iter(f"{{{_CONTAINER_NS}}}rootfile"):
        full_path = rootfile.get("full-path")
        if full_path:
            return _member("", full_path)
    raise Unreadable("the EPUB's container.xml names no package document")


def _parse(archive: zipfile.ZipFile, name: str) -> etree._Element:
    try:
        with archive.open(name) as part:
            return etree.parse(part, _PARSER).getroot()
    except (KeyError, etree.XMLSyntaxError, zipfile.BadZipFile, OSError) as exc:
        raise Unreadable(f"the EPUB is damaged ({name}): {exc}") from exc


def _member(base: str, href: str) -> str:
    """An href of the package, as the name of an archive member (never above the root)."""
    joined = posixpath.normpath(posixpath.join(base, unquote(href.split("#", 1)[0])))
    return joined.lstrip("/")


def _encrypted_members(archive: zipfile.ZipFile) -> set[str]:
    if ENCRYPTION not in archive.namelist():
        return set()
    locked = set()
    for data in _parse(archive, ENCRYPTION).iter(f"{{{_ENC_NS}}}EncryptedData"):
        method = data.find(f"{{{_ENC_NS}}}EncryptionMethod")
        if method is not None and method.get("Algorithm") in _FONT_OBFUSCATION:
            continue
        for reference in data.iter(f"{{{_ENC_NS}}}CipherReference"):
            locked.add(_member("", reference.get("URI", "")))
    return locked


def _chapter(archive: zipfile.ZipFile, name: str, media_type: str) -> str:
    if media_type not in _TEXT_TYPES:
        return ""
    try:
        raw = archive.read(name)
    except KeyError:  # listed but missing: the page stays, empty
        return ""
    except (zipfile.BadZipFile, OSError) as exc:
        raise Unreadable(f"the EPUB is damaged ({name}): {exc}") from exc
    # lxml's HTML parser refuses a decoded text that declares its encoding.
    return html_text(_XML_DECLARATION.sub(b"", raw), Format.EPUB).text
