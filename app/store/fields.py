"""Payload layout of a point, named once: every reader and writer of a payload key uses these
names. Also the payload indexes every filtered field gets, and the vector names."""

from enum import StrEnum
from typing import Any

# What a point is.
KIND = "kind"
KIND_CHUNK = "chunk"  # a searchable chunk of an indexed document
KIND_PENDING = "pending"  # the placeholder of an accepted, not yet indexed document
KIND_META = "meta"  # statistics of the index itself (app.ingest.sparse_fit); never a result

# The index's BM25 statistic (on its metadata point).
BM25_AVG_LEN = "bm25_avg_len"  # mean chunk length the sparse vectors are encoded with
BM25_CHUNKS = "bm25_chunks"  # how many chunks that mean was measured over
BM25_RESUME = "bm25_resume"  # a re-encoding under way: where it continues (None: none)
KIND_PURGE = "purge"  # a purge under way: its doc types and revision (ingest/purge.py)

# Identity and access (chunks and placeholders).
DOC_KEY = "doc_key"  # `doc_type:doc_id`, one document (see doc_key())
DOC_TYPE = "doc_type"
DOC_ID = "doc_id"
# `user:<owner>` plus the document's ACL. Only a chunk carries it (never a placeholder, meta
# point or purge marker): the search filter relies on it (app.filters.conditions).
READERS = "readers"

# A chunk: the document's fields, its text and its place in the document.
TITLE = "title"
TEXT = "text"
CHUNK_INDEX = "chunk_index"  # a document is its chunk 0 for counts, facets and browse
TOTAL_CHUNKS = "total_chunks"
CHUNK_START = "chunk_start"  # where the chunk's text starts in the document's content
CHUNK_END = "chunk_end"  # and where it ends (exclusive): text == content[start:end]
OWNER = "owner"
ACL = "acl"
MODIFIED_AT = "modified_at"  # int seconds (integer index)
FILE_PATH = "file_path"
FOLDERS = "folders"  # every ancestor of file_path: folder filters match one of them
TOP_FOLDER = "top_folder"  # the folder chip a file falls under
DIRECTORIES = "directories"  # the folders holding file_path, "/" first: the folder tree
TAGS = "tags"
CATEGORY = "category"
MIME_TYPE = "mime_type"
URL = "url"  # the document's own link (http/https), when it was sent with one
# Paged files (PDF pages, slides, sheets): where the chunk starts and ends, 1-based, and how many
# pages the document has. Absent for unpaged documents.
PAGE_NUMBER = "page_number"
PAGE_END = "page_end"
PAGE_BREAKS = "page_breaks"  # offsets in a chunk's text where its later pages start
PAGE_COUNT = "page_count"
NO_TEXT = "no_text"  # true: the file had no text (a scan): indexed by its title alone
EXTRACTION = "extraction"  # how a file's text was obtained: text | ocr | mixed; None: sent as text
CHARACTERS = "characters"  # the characters of text of a chunk's document
CONTENT_HASH = (
    "content_hash"  # what was indexed (text and metadata): a resend equal to it is a no-op
)

# A placeholder: the accepted document and where its indexing stands.
REVISION = "revision"
STATUS = "status"
STATUS_PENDING = "pending"
STATUS_FAILED = "failed"
STATUS_NO_TEXT = "no_text"  # a document status only: indexed, but its file had no text
ERROR = "error"
DOCUMENT = "document"
DOC_TYPES = "doc_types"  # a purge's doc types
# Which replica indexes a placeholder, and until when (seconds) unless it renews (ingest/leases).
LEASE_OWNER = "lease_owner"
LEASE_UNTIL = "lease_until"

DENSE_VECTOR = "dense"
SPARSE_VECTOR = "sparse"


def embedded_text(title: str | None, text: str | None) -> str:
    """What a chunk's vectors are computed from: its document's title line, then its text."""
    return f"{title or ''}\n{text or ''}"


def chunk_text(payload: dict[str, Any]) -> str:
    """`embedded_text` of a stored chunk."""
    return embedded_text(payload.get(TITLE), payload.get(TEXT))


def doc_key(doc_type: str, doc_id: str) -> str:
    """The one spelling of a document's key: two doc types with one doc_id are two documents."""
    return f"{doc_type}:{doc_id}"


class IndexType(StrEnum):
    KEYWORD = "keyword"
    INTEGER = "integer"


# The payload indexes the embedded engine keeps in memory; the others are memory-mapped, read
# through the page cache when a filter uses them. Every search checks the access rule at each
# point it visits: mapped, it cost 23 % more per hybrid search at 100k chunks. Loading every
# index into memory took 0.5 of the 0.8 s it took to open a 100k shard. A narrowed search
# (`app.store.narrowing`) looks up each of its documents' keys and checks each point's: at 1M
# chunks, 3,200 documents cost the engine 17.9 ms in memory against 25.2 mapped (in process),
# tags_all + dates over HTTP 25.2 against 30.7 ms; `/readyz` 3.0 against 2.3 s and the engine
# +140 MB at 1M, 1.09 against 1.07 s and +7 MB at 100k (2026-12-04, 21:59-22:01 UTC).
PINNED_INDEXES = frozenset({READERS, DOC_KEY})

PAYLOAD_INDEXES: dict[str, IndexType] = {
    KIND: IndexType.KEYWORD,
    READERS: IndexType.KEYWORD,
    DOC_KEY: IndexType.KEYWORD,
    DOC_TYPE: IndexType.KEYWORD,
    OWNER: IndexType.KEYWORD,
    MODIFIED_AT: IndexType.INTEGER,
    FOLDERS: IndexType.KEYWORD,
    TOP_FOLDER: IndexType.KEYWORD,
    DIRECTORIES: IndexType.KEYWORD,
    TAGS: IndexType.KEYWORD,
    CATEGORY: IndexType.KEYWORD,
    CHUNK_INDEX: IndexType.INTEGER,
}
