"""A changed file -> its document, or the reason it is skipped.

The size is checked from the listing before anything is downloaded, and again while the body
streams to a scratch file; encrypted files are not downloaded at all. The text comes from the
same extractors (worker processes, time limit) as `POST /api/v1/files`. A skipped file keeps its
reason and is not tried again until its ETag changes."""

import logging
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from app.errors import ServiceError
from app.extract.sandbox import Extractor
from app.ingest.documents import Document, with_labels
from app.ingest.models import DocumentFields
from app.ingest.uploads import file_document
from app.nextcloud.client import NextcloudClient, dav_quote
from app.nextcloud.dav import DavEntry
from app.nextcloud.errors import Refused

CHUNK_BYTES = 1 << 16
log = logging.getLogger("astrolabe.nextcloud")


@dataclass(frozen=True)
class Skipped:
    reason: str  # too_large | encrypted | unsupported_format | unreadable | gone | ...


class TooLargeWhileStreaming(Exception):
    pass


class FileReader:
    def __init__(self, extractor: Extractor, scratch: Path, max_bytes: int) -> None:
        self.extractor = extractor
        self.scratch = scratch
        self.max_bytes = max_bytes
        scratch.mkdir(parents=True, exist_ok=True)

    def read(
        self, client: NextcloudClient, url_path: str, entry: DavEntry, labels: Document
    ) -> Document | Skipped:
        """The document of the file at `url_path` (its DAV URL path) with `labels`' metadata."""
        if entry.encrypted:
            return Skipped("encrypted")
        if entry.size is not None and entry.size > self.max_bytes:
            return Skipped("too_large")
        with tempfile.TemporaryDirectory(dir=self.scratch) as folder:
            target = Path(folder) / "download"
            try:
                self._download(client, url_path, target)
            except TooLargeWhileStreaming:
                return Skipped("too_large")
            except Refused:
                return Skipped("gone")
            try:
                extracted = self.extractor.extract(target, entry.name, entry.content_type)
                metadata = DocumentFields(
                    doc_type=labels.doc_type,
                    doc_id=labels.doc_id,
                    owner=labels.owner,
                    title=labels.title,
                )
                document = file_document(metadata, extracted, entry.name)
            except ServiceError as exc:
                return Skipped(exc.code)
            except Exception:  # an extractor's bug must not make the file a retry storm
                log.exception("extracting %s failed", entry.path)
                return Skipped("unreadable")
        return replace(
            with_labels(document, labels), mime_type=document.mime_type or entry.content_type
        )

    def _download(self, client: NextcloudClient, url_path: str, target: Path) -> None:
        written = 0
        with client.stream(dav_quote(url_path)) as response, target.open("wb") as out:
            for chunk in response.iter_bytes(CHUNK_BYTES):
                written += len(chunk)
                if written > self.max_bytes:
                    raise TooLargeWhileStreaming()
                out.write(chunk)
