"""The manifest every backup carries: what it holds (backend, index format, the settings the data
was written with), its counts, and the size and SHA-256 of every file. It is written last, after
every file is on disk (fsynced), and atomically: a backup cut short, by a kill -9 or a full disk,
has no manifest, and `restore` refuses a directory without one or with a file that differs."""

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from qdrant_client.http import models

from app import __version__
from app.backup.errors import BackupError
from app.durable import write_atomically
from app.filters import selectors
from app.store.base import Store

MANIFEST = "manifest.json"
VERSION = 1  # of the backup format (the manifest and the files beside it)
KIND = "astrolabe-search backup"
_BLOCK = 1 << 20


@dataclass(frozen=True)
class Counts:
    documents: int  # indexed documents
    chunks: int  # searchable chunks
    points: int  # every point: chunks and placeholders
    pending: int  # accepted, waiting to be indexed
    failed: int  # accepted, indexing failed

    # What each count counts (None: every point), as `Store.copy_to` takes them.
    SELECTORS: ClassVar[dict[str, models.Filter | None]] = {
        "documents": selectors.documents(),
        "chunks": selectors.chunks(),
        "points": None,
        "pending": selectors.pending(),
        "failed": selectors.failed(),
    }

    @classmethod
    def of(cls, store: Store) -> "Counts":
        return cls(**{name: store.count(f) for name, f in cls.SELECTORS.items()})


@dataclass(frozen=True)
class FileEntry:
    bytes: int
    sha256: str

    @classmethod
    def of(cls, path: Path) -> "FileEntry":
        """Size and checksum, once the file is on disk (fsynced: the manifest comes after)."""
        digest = hashlib.sha256()
        size = 0
        with path.open("rb") as data:
            while block := data.read(_BLOCK):
                digest.update(block)
                size += len(block)
            os.fsync(data.fileno())
        return cls(size, digest.hexdigest())


@dataclass(frozen=True)
class Manifest:
    backend: str  # "embedded" (a copy of the shard) or "server" (a Qdrant snapshot)
    collection: str
    index_format: int | None  # the embedded layout's format (`index.json`); None: server
    settings: dict[str, Any] | None  # what the data was written with (`index.json`)
    counts: Counts
    files: dict[str, FileEntry]  # path relative to the backup directory
    release: str = __version__
    created_at: str = ""

    @classmethod
    def describe(
        cls,
        root: Path,
        backend: str,
        collection: str,
        counts: Counts,
        record: dict[str, Any] | None = None,
    ) -> "Manifest":
        """The manifest of the files under `root` (all of them)."""
        files = {name: FileEntry.of(root / name) for name in files_under(root)}
        return cls(
            backend=backend,
            collection=collection,
            index_format=None if record is None else record.get("format"),
            settings=None if record is None else record.get("settings"),
            counts=counts,
            files=files,
            created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )

    def to_json(self) -> str:
        body = {"kind": KIND, "version": VERSION} | asdict(self)
        return json.dumps(body, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str) -> "Manifest":
        try:
            body = json.loads(text)
            if body.get("kind") != KIND:
                raise BackupError(f"{where} is not an Astrolabe Search backup manifest")
            if body.get("version") != VERSION:
                raise BackupError(
                    f"{where} is a backup of format {body.get('version')}; this release reads"
                    f" format {VERSION}"
                )
            return cls(
                backend=str(body["backend"]),
                collection=str(body["collection"]),
                index_format=body["index_format"],
                settings=body["settings"],
                counts=Counts(**body["counts"]),
                files={name: FileEntry(**entry) for name, entry in body["files"].items()},
                release=str(body["release"]),
                created_at=str(body["created_at"]),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BackupError(f"{where} is unreadable: {exc!r}") from exc

    def write(self, root: Path) -> None:
        """The last step of a backup: from here on it is whole."""
        write_atomically(root / MANIFEST, self.to_json())

    @classmethod
    def read(cls, root: Path) -> "Manifest":
        path = root / MANIFEST
        if not path.is_file():
            raise BackupError(
                f"{root} has no {MANIFEST}: not a complete backup (a backup cut short never"
                " gets one); make a new one"
            )
        return cls.from_json(path.read_text(encoding="utf-8"), str(path))

    def verify(self, root: Path) -> None:
        """Every listed file there with its size and checksum, and no other."""
        found = set(files_under(root))
        missing = sorted(set(self.files) - found)
        extra = sorted(found - set(self.files))
        if missing or extra:
            what = f"{missing[0]} is missing" if missing else f"{extra[0]} is not in the manifest"
            raise BackupError(f"{root} does not match its manifest: {what}")
        for name, entry in sorted(self.files.items()):
            if FileEntry.of(root / name) != entry:
                raise BackupError(f"{root} does not match its manifest: {name} differs")


def files_under(root: Path) -> list[str]:
    """Every file below `root` but the manifest, as relative '/'-separated paths, sorted."""
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and path.relative_to(root).as_posix() != MANIFEST
    )
