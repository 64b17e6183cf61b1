"""Named selectors: which points an operation is about, built here and nowhere else. The search
filter (readable by a principal, inside a FilterSpec) is `app.filters.conditions`."""

from collections.abc import Iterable

from qdrant_client.http import models

from app.store import fields

# What the engine is asked to restrict an operation to (the store's filter type).
Selector = models.Filter


def _is(key: str, value: str | int) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _any_of(key: str, values: Iterable[str]) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))


IS_CHUNK = _is(fields.KIND, fields.KIND_CHUNK)
IS_PLACEHOLDER = _is(fields.KIND, fields.KIND_PENDING)
# A document is its chunk 0: counting, faceting or browsing chunk 0 counts each document once.
FIRST_CHUNK = _is(fields.CHUNK_INDEX, 0)


def of_document(key: str) -> models.FieldCondition:
    return _is(fields.DOC_KEY, key)


def of_documents(keys: Iterable[str]) -> models.FieldCondition:
    return _any_of(fields.DOC_KEY, keys)


def in_directory(folder: str) -> models.FieldCondition:
    """Files anywhere below this folder (the folder tree's counts)."""
    return _is(fields.DIRECTORIES, folder)


def readable_by(entries: Iterable[str]) -> models.FieldCondition:
    """`user:<id>` / `group:<id>` entries, any of which may read the point."""
    return _any_of(fields.READERS, entries)


def modified_at(where: models.Filter, seconds: int) -> models.Filter:
    """The points of `where` modified at this second."""
    return models.Filter(must=[where, _is(fields.MODIFIED_AT, seconds)])


def documents() -> models.Filter:
    """Every indexed document, once (its first chunk)."""
    return models.Filter(must=[IS_CHUNK, FIRST_CHUNK])


def documents_with_keys(keys: Iterable[str]) -> models.Filter:
    """The indexed documents among these keys, once each."""
    return models.Filter(must=[IS_CHUNK, FIRST_CHUNK, of_documents(keys)])


def chunks() -> models.Filter:
    """Every searchable chunk."""
    return models.Filter(must=[IS_CHUNK])


def chunks_of(key: str) -> models.Filter:
    """The searchable chunks of one document."""
    return models.Filter(must=[of_document(key), IS_CHUNK])


def chunks_of_from(key: str, first_index: int) -> models.Filter:
    """The chunks of one document from `first_index` on: what a shorter new version leaves."""
    past = models.FieldCondition(key=fields.CHUNK_INDEX, range=models.Range(gte=first_index))
    return models.Filter(must=[of_document(key), IS_CHUNK, past])


def points_of(key: str) -> models.Filter:
    """Everything stored for one document: its chunks and its placeholder."""
    return models.Filter(must=[of_document(key)])


def placeholder_of(key: str, revision: int) -> models.Filter:
    """One document's placeholder, only while it is still this revision."""
    return models.Filter(must=[of_document(key), IS_PLACEHOLDER, _is(fields.REVISION, revision)])


def placeholders() -> models.Filter:
    """Every placeholder, pending or failed."""
    return models.Filter(must=[IS_PLACEHOLDER])


def pending() -> models.Filter:
    """Placeholders of accepted documents still waiting to be indexed."""
    return models.Filter(must=[IS_PLACEHOLDER, _is(fields.STATUS, fields.STATUS_PENDING)])


def failed() -> models.Filter:
    """Placeholders of documents whose indexing failed."""
    return models.Filter(must=[IS_PLACEHOLDER, _is(fields.STATUS, fields.STATUS_FAILED)])


def revision_at_most(revision: int) -> models.Filter:
    """Written by this revision or an older one (or before chunks carried a revision)."""
    return models.Filter(
        should=[
            models.FieldCondition(key=fields.REVISION, range=models.Range(lte=revision)),
            models.IsEmptyCondition(is_empty=models.PayloadField(key=fields.REVISION)),
        ]
    )


def older_chunks_of_from(key: str, first_index: int, revision: int) -> models.Filter:
    """`chunks_of_from`, leaving alone the chunks a newer version than `revision` wrote."""
    past = models.FieldCondition(key=fields.CHUNK_INDEX, range=models.Range(gte=first_index))
    return models.Filter(must=[of_document(key), IS_CHUNK, past, revision_at_most(revision)])


def chunks_of_revision(key: str, revision: int) -> models.Filter:
    """The chunks one version of a document wrote."""
    return models.Filter(must=[of_document(key), IS_CHUNK, _is(fields.REVISION, revision)])


def at_revision(revision: int | None) -> models.Filter:
    """Points written by exactly this revision (None: written before points carried one)."""
    if revision is None:
        return models.Filter(
            must=[models.IsEmptyCondition(is_empty=models.PayloadField(key=fields.REVISION))]
        )
    return models.Filter(must=[_is(fields.REVISION, revision)])


def leased_by(owner: str) -> models.Filter:
    """The waiting placeholders one replica holds the lease of."""
    return models.Filter(
        must=[
            IS_PLACEHOLDER,
            _is(fields.STATUS, fields.STATUS_PENDING),
            _is(fields.LEASE_OWNER, owner),
        ]
    )


def takeable(now: float, owner: str, include_own: bool, ids: Iterable[str] = ()) -> models.Filter:
    """Waiting placeholders (among `ids` if given) whose lease is expired or free, or held by
    `owner` with `include_own`."""
    expired = models.FieldCondition(key=fields.LEASE_UNTIL, range=models.Range(lt=now))
    free = models.IsEmptyCondition(is_empty=models.PayloadField(key=fields.LEASE_OWNER))
    own = [_is(fields.LEASE_OWNER, owner)] if include_own else []
    among = [models.HasIdCondition(has_id=list(ids))] if ids else []
    return models.Filter(
        must=[IS_PLACEHOLDER, _is(fields.STATUS, fields.STATUS_PENDING), *among],
        should=[expired, free, *own],
    )


def of_type(doc_type: str) -> models.FieldCondition:
    return _is(fields.DOC_TYPE, doc_type)


def purged(doc_type: str, revision: int) -> models.Filter:
    """What a purge of one doc type removes: every chunk and placeholder of that type written
    up to its revision (a document accepted after the purge began stays)."""
    return models.Filter(
        must=[
            of_type(doc_type),
            _any_of(fields.KIND, [fields.KIND_CHUNK, fields.KIND_PENDING]),
            revision_at_most(revision),
        ]
    )


def documents_of_type(doc_type: str, revision: int) -> models.Filter:
    """The indexed documents of one type written up to `revision`, once each."""
    return models.Filter(
        must=[IS_CHUNK, FIRST_CHUNK, of_type(doc_type), revision_at_most(revision)]
    )


def placeholders_of_type(doc_type: str, revision: int) -> models.Filter:
    """The placeholders of one type written up to `revision`."""
    return models.Filter(must=[IS_PLACEHOLDER, of_type(doc_type), revision_at_most(revision)])


def purges() -> models.Filter:
    """The markers of purges under way."""
    return models.Filter(must=[_is(fields.KIND, fields.KIND_PURGE)])
