"""Documents from files on disk, for `astrolabe-search ingest PATH...`: the same extractors and
worker processes as `POST /api/v1/files`, a few files read ahead while the model embeds, a
file that cannot be read reported and skipped, and a file already indexed at its current
modification time skipped (a re-run after an interruption picks up where it stopped)."""

import hashlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from app.errors import ServiceError
from app.extract.model import Extracted
from app.extract.sandbox import Extractor
from app.ingest.documents import Document
from app.ingest.models import DocumentFields
from app.ingest.pipeline import chunk_point_id
from app.ingest.uploads import file_document
from app.store import fields
from app.store.base import Store
from app.store.fields import doc_key

# What a folder walk picks up; a file named on the command line is always tried.
SUFFIXES = frozenset(
    {".pdf", ".docx", ".pptx", ".xlsx", ".odt", ".ods", ".odp", ".html", ".htm", ".md"}
    | {".markdown", ".txt", ".text", ".eml"}
    | {".doc", ".rtf", ".epub", ".msg", ".csv", ".tsv"}
)


@dataclass(frozen=True)
class FoundFile:
    path: Path
    file_path: str  # as indexed: '/' + the path below the folder it was found under
    modified_at: int

    @property
    def doc_id(self) -> str:
        return hashlib.sha1(str(self.path).encode()).hexdigest()[:20]

    @property
    def key(self) -> str:
        return doc_key("file", self.doc_id)


@dataclass(frozen=True)
class Refused:
    path: Path
    code: str
    message: str


def find_files(paths: Sequence[Path]) -> list[FoundFile]:
    found = []
    for root in paths:
        root = root.resolve()
        if root.is_file():
            candidates = [root]
        else:
            walked = (p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))
            candidates = sorted(p for p in walked if p.suffix.lower() in SUFFIXES)
        for path in candidates:
            relative = "/" + path.relative_to(root.parent).as_posix()
            found.append(FoundFile(path, relative, int(path.stat().st_mtime)))
    return found


def documents_from_files(
    files: Sequence[FoundFile],
    owner: str,
    extractor: Extractor,
    is_current: Callable[[FoundFile], bool] = lambda _: False,
) -> Iterator[Document | Refused | None]:
    """Per file, in order: its document, why it was refused, or None when it is current."""
    ahead = 2 * extractor.workers + 2  # files read ahead of the one being indexed
    with ThreadPoolExecutor(extractor.workers, thread_name_prefix="ingest-extract") as pool:
        waiting: deque[tuple[FoundFile, Future[Extracted] | None]] = deque()
        queued = iter(files)
        while True:
            while len(waiting) < ahead and (file := next(queued, None)) is not None:
                current = is_current(file)
                future = (
                    None if current else pool.submit(extractor.extract, file.path, file.path.name)
                )
                waiting.append((file, future))
            if not waiting:
                return
            file, future = waiting.popleft()
            yield None if future is None else _document(file, future, owner)


def _document(file: FoundFile, future: "Future[Extracted]", owner: str) -> Document | Refused:
    try:
        extracted = future.result()
        metadata = DocumentFields(
            doc_type="file",
            doc_id=file.doc_id,
            owner=owner,
            modified_at=file.modified_at,
            file_path=file.file_path,
        )
        return file_document(metadata, extracted, file.path.name)
    except ServiceError as exc:
        return Refused(file.path, exc.code, exc.message)


def is_current_in(store: Store) -> Callable[[FoundFile], bool]:
    """Whether a file is indexed at its current modification time (then it is not read again)."""

    def is_current(file: FoundFile) -> bool:
        first = store.retrieve([chunk_point_id(file.key, 0)], [fields.MODIFIED_AT])
        return bool(first) and first[0].payload.get(fields.MODIFIED_AT) == file.modified_at

    return is_current
