"""Payload layout of a point, and the payload indexes every filtered field gets."""

from enum import StrEnum

KIND_FIELD = "kind"
KIND_CHUNK = "chunk"  # a searchable chunk of an indexed document
KIND_PENDING = "pending"  # the placeholder of an accepted, not yet indexed document
ACCESS_FIELD = "readers"  # `user:<owner>` plus the document's ACL
DOC_KEY_FIELD = "doc_key"  # `doc_type:doc_id`, one document
DENSE_VECTOR = "dense"
SPARSE_VECTOR = "sparse"
DENSE_SIZE = 384


class IndexType(StrEnum):
    KEYWORD = "keyword"
    INTEGER = "integer"


PAYLOAD_INDEXES: dict[str, IndexType] = {
    KIND_FIELD: IndexType.KEYWORD,
    ACCESS_FIELD: IndexType.KEYWORD,
    DOC_KEY_FIELD: IndexType.KEYWORD,
    "doc_type": IndexType.KEYWORD,
    "owner": IndexType.KEYWORD,
    "modified_at": IndexType.INTEGER,
    "folders": IndexType.KEYWORD,
    "top_folder": IndexType.KEYWORD,
    "tags": IndexType.KEYWORD,
    "category": IndexType.KEYWORD,
    "chunk_index": IndexType.INTEGER,
}
