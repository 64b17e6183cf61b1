"""Documents from files on disk, for `astrolabe-search ingest PATH...`."""

import hashlib
import html
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MIME_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".text": "text/plain",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
}
_TAGS = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.S | re.I)


def _text_of(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        try:
            from pypdf import PdfReader
        except ImportError:
            return None
        return "\n\n".join(page.extract_text() or "" for page in PdfReader(path).pages)
    raw = path.read_text(encoding="utf-8", errors="replace")
    if suffix in (".html", ".htm"):
        return html.unescape(_TAGS.sub(" ", raw))
    return raw


def _title(path: Path, text: str) -> str:
    for line in text.splitlines()[:20]:
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("_", " ").replace("-", " ")


def _files(paths: Sequence[Path]) -> Iterator[tuple[Path, Path]]:
    """(file, root it was found under)."""
    for root in paths:
        root = root.resolve()
        candidates = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in candidates:
            if path.suffix.lower() in MIME_TYPES:
                yield path, root.parent


def documents_from_paths(paths: Sequence[Path], owner: str) -> Iterator[dict[str, Any]]:
    for path, base in _files(paths):
        text = _text_of(path)
        if text is None:
            continue
        relative = "/" + path.relative_to(base).as_posix()
        modified = datetime.fromtimestamp(int(path.stat().st_mtime), UTC)
        yield {
            "doc_type": "file",
            "doc_id": hashlib.sha1(str(path).encode()).hexdigest()[:20],
            "title": _title(path, text),
            "content": text,
            "owner": owner,
            "modified_at": modified.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "file_path": relative,
            "mime_type": MIME_TYPES[path.suffix.lower()],
            "acl": [],
        }
