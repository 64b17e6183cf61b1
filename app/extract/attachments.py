"""A mail's attachments (EML, MSG), read through the same dispatch as any file: app.extract.reader
hands its own `read_file` in, so an attached PDF, Word file or mail is sniffed and read as an
upload would be. Within the mail's bounds:

- bytes and entries: every attachment's bytes (and, for a ZIP-based one, what it declares it
  expands to) and one entry each count against SEARCH_MAX_ARCHIVE_BYTES / _ENTRIES, shared by the
  whole mail, its attached mails included; an attachment is read with what is left as its own
  archive limits, and one past them is skipped;
- depth: a mail attached to a mail is read down to MAX_DEPTH levels;
- time: the attachments are read in the same worker, in the same request, under the file's time
  limit (SEARCH_EXTRACT_TIMEOUT).

An attachment that cannot be read (an unsupported format, damaged, encrypted, past the bounds) is
skipped: the mail is still indexed, the attachment's name still listed."""

import io
import logging
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.extract.archive import ArchiveLimits
from app.extract.model import Extracted

log = logging.getLogger(__name__)

MAX_DEPTH = 3  # the mail (0), an attached mail (1), a mail attached to that (2), and one more
Reader = Callable[[Path, ArchiveLimits, str, "str | None", "Attachments"], Extracted]


@dataclass
class _Budget:
    bytes: int
    entries: int


@dataclass
class Attachments:
    """What a mail may still read of its attachments; `read` is app.extract.reader.read_file."""

    read: Reader
    limits: ArchiveLimits
    depth: int = 0
    _budget: _Budget | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self._budget is None:
            self._budget = _Budget(self.limits.max_bytes, self.limits.max_entries)

    @property
    def budget(self) -> _Budget:
        assert self._budget is not None
        return self._budget

    def child(self) -> "Attachments":
        """The bounds of an attached mail's own attachments: one level deeper, the same budget."""
        return replace(self, depth=self.depth + 1)

    def text(self, name: str, data: bytes, mime_type: str | None = None) -> Extracted | None:
        """The attachment's text; None when it is skipped."""
        if self.depth + 1 > MAX_DEPTH:
            log.info("attachment %r not read: nested %d mails deep", name, self.depth + 1)
            return None
        expanded, members = _archive_size(data)
        cost, entries = len(data) + expanded, 1 + members
        if cost > self.budget.bytes or entries > self.budget.entries:
            log.info("attachment %r not read: past the mail's size bounds", name)
            return None
        limits = ArchiveLimits(self.budget.bytes - len(data), self.budget.entries - 1)
        self.budget.bytes -= cost
        self.budget.entries -= entries
        with tempfile.TemporaryDirectory(prefix="astrolabe-attachment-") as folder:
            path = Path(folder) / "attachment"
            path.write_bytes(data)
            try:
                return self.read(path, limits, name, mime_type, self.child())
            except Exception as exc:  # the attachment's fault, not the mail's: skipped
                log.info("attachment %r not read: %s: %s", name, type(exc).__name__, exc)
                return None


def _archive_size(data: bytes) -> tuple[int, int]:
    """What a ZIP-based attachment declares it expands to, and its entries ((0, 0) for any
    other: a damaged archive is refused by its reader)."""
    if not data.startswith(b"PK"):
        return 0, 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return 0, 0
    return sum(entry.file_size for entry in entries), len(entries)


def extraction(body_has_text: bool, parts: list[Extracted]) -> str:
    """How a mail's text was obtained: `ocr` when all of it came from attachments read by OCR,
    `mixed` when some did, else `text`."""
    ocr = [part for part in parts if part.extraction != "text" and part.has_text]
    if not ocr:
        return "text"
    if not body_has_text and len(ocr) == len([part for part in parts if part.has_text]):
        return "ocr" if all(part.extraction == "ocr" for part in ocr) else "mixed"
    return "mixed"
