"""Selectors for one user's view of single documents: a document's chunks and the documents the
user may read, under the access rule of the search filter."""

from qdrant_client.http import models

from app.auth import Principal
from app.filters.conditions import access_principals
from app.filters.selectors import FIRST_CHUNK, IS_CHUNK, of_document, readable_by
from app.store import fields


def readable_chunks_of(principal: Principal, key: str, first: int, last: int) -> models.Filter:
    """Chunks `first..last` (inclusive) of one document, if the principal may read it."""
    window = models.FieldCondition(key=fields.CHUNK_INDEX, range=models.Range(gte=first, lte=last))
    return models.Filter(
        must=[IS_CHUNK, readable_by(access_principals(principal)), of_document(key), window]
    )


def readable_documents(principal: Principal) -> models.Filter:
    """Every indexed document the principal may read, once (its first chunk)."""
    return models.Filter(must=[IS_CHUNK, readable_by(access_principals(principal)), FIRST_CHUNK])
