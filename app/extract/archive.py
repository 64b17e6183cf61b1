"""Office and OpenDocument files are ZIP archives: bound what one may expand to before any reader
opens it. The bound holds on the declared sizes: Python's zipfile, which every reader here goes
through, never inflates an entry past its declared size (it cuts there and fails the CRC)."""

import zipfile
from dataclasses import dataclass
from pathlib import Path

from app.extract.errors import Encrypted, TooLarge, Unreadable


@dataclass(frozen=True)
class ArchiveLimits:
    max_bytes: int = 512 * 2**20  # uncompressed, all entries together
    max_entries: int = 10_000


def open_checked(path: Path, limits: ArchiveLimits) -> zipfile.ZipFile:
    """The archive, once its entries are known to stay within `limits` and none is encrypted."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise Unreadable(f"the file is a damaged ZIP archive: {exc}") from exc
    try:
        check(archive, limits)
    except Exception:
        archive.close()
        raise
    return archive


def check(archive: zipfile.ZipFile, limits: ArchiveLimits) -> None:
    entries = archive.infolist()
    if len(entries) > limits.max_entries:
        raise TooLarge(
            f"the archive holds {len(entries)} entries, more than the {limits.max_entries}"
            " allowed (SEARCH_MAX_ARCHIVE_ENTRIES)"
        )
    expanded = sum(entry.file_size for entry in entries)
    if expanded > limits.max_bytes:
        raise TooLarge(
            f"the archive expands to {expanded} bytes, more than the {limits.max_bytes} allowed"
            " (SEARCH_MAX_ARCHIVE_BYTES)"
        )
    if any(entry.flag_bits & 0x1 for entry in entries):
        raise Encrypted("the archive's entries are encrypted: send the file without a password")
