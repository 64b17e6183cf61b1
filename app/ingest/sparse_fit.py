"""BM25 fitted to the corpus. The mean chunk length (in the encoder's own tokens) that the
index's sparse vectors are encoded with is a statistic of the index, kept in it as one metadata
point (kind `meta`, no vectors: no search, count or facet selects it), so it travels with the
index (server mode, `migrate`). New chunks are encoded with it; the first batch written to an
empty index measures it.

As documents come and go the live mean drifts from it. Past DRIFT_BOUND, `refit` measures the
live mean, records it, and re-encodes every stored sparse vector from the stored chunk text (the
dense model never runs), a page at a time; the metadata point says where the pass stands, so an
interrupted run resumes there, and chunks written meanwhile already use the new mean.

Why 25 %: on Vaswani and on a collection of 6-abstract documents, encoding with the mean off by
a factor 0.8..1.25 moved BM25's nDCG@10 by at most 0.004 and left over 95 % of each top 10 in
place; off by a factor 2 it lost up to 0.008 and 7-12 % of the top 10 (docs/benchmarks.md). A
pass costs a rewrite of every sparse vector and, on the embedded engine, a rebuild of the HNSW
index."""

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import groupby
from typing import Any

from qdrant_client.http import models

from app.embeddings.sparse import Bm25Encoder, token_count
from app.filters import selectors
from app.store import fields
from app.store.base import Hit, Store
from app.store.fields import SPARSE_VECTOR, chunk_text

DRIFT_BOUND = 0.25
META_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "astrolabe:index-statistics"))
PAGE = 256
START = ""  # `resume` of a pass that has not re-encoded anything yet


@dataclass(frozen=True)
class SparseFit:
    avg_len: float
    chunks: int  # how many chunks the mean was measured over
    resume: str | None = None  # a pass under way: the first point it has not re-encoded

    @classmethod
    def of(cls, payload: dict[str, Any]) -> "SparseFit":
        resume = payload.get(fields.BM25_RESUME)
        return cls(
            avg_len=float(payload[fields.BM25_AVG_LEN]),
            chunks=int(payload[fields.BM25_CHUNKS]),
            resume=None if resume is None else str(resume),
        )

    def payload(self) -> dict[str, Any]:
        return {
            fields.KIND: fields.KIND_META,
            fields.BM25_AVG_LEN: self.avg_len,
            fields.BM25_CHUNKS: self.chunks,
            fields.BM25_RESUME: self.resume,
        }


@dataclass(frozen=True)
class Refit:
    """What `refit` found and did."""

    before: SparseFit | None
    after: SparseFit | None
    live_mean: float | None  # None: not measured (a pass resumed) or no chunks
    reencoded: int

    @property
    def drift(self) -> float | None:
        if self.before is None or self.live_mean is None:
            return None
        return drift(self.before, self.live_mean)


def read_fit(store: Store) -> SparseFit | None:
    found = store.retrieve([META_ID])
    return SparseFit.of(found[0].payload) if found else None


def write_fit(store: Store, fit: SparseFit) -> None:
    store.upsert([models.PointStruct(id=META_ID, vector={}, payload=fit.payload())])


def mean_length(texts: list[str]) -> float:
    return max(1.0, sum(map(token_count, texts)) / len(texts))


def fitted_encoder(store: Store, encoder: Bm25Encoder, texts: list[str]) -> Bm25Encoder:
    """The encoder for new chunks: the index's mean, or (an empty index) the mean of these."""
    fit = read_fit(store)
    if fit is None:
        if not texts:
            return encoder
        fit = SparseFit(mean_length(texts), len(texts))
        write_fit(store, fit)
    return encoder.with_avg_len(fit.avg_len)


def drift(fit: SparseFit, live_mean: float) -> float:
    return abs(live_mean - fit.avg_len) / fit.avg_len


def _pages(store: Store, offset: str | None, keys: list[str]) -> Any:
    while True:
        hits, offset = store.scroll_page(selectors.chunks(), offset, PAGE, keys)
        yield hits, offset
        if offset is None:
            return


def measure(store: Store) -> tuple[int, float | None]:
    """The stored chunks and their mean length, from their text."""
    chunks, tokens = 0, 0
    for hits, _ in _pages(store, None, [fields.TITLE, fields.TEXT]):
        chunks += len(hits)
        tokens += sum(token_count(chunk_text(hit.payload)) for hit in hits)
    return chunks, (max(1.0, tokens / chunks) if chunks else None)


def refit(
    store: Store, *, force: bool = False, progress: Callable[[int], None] | None = None
) -> Refit:
    """Re-encode the stored sparse vectors with the live mean when it drifted past the bound
    (or `force`), or finish a pass an earlier run left; else change nothing."""
    before = read_fit(store)
    live_mean = None
    if before is not None and before.resume is not None:
        fit = before  # a pass an earlier run left
    else:
        chunks, live_mean = measure(store)
        if live_mean is None:
            return Refit(before, before, None, 0)
        if before is not None and not force and drift(before, live_mean) <= DRIFT_BOUND:
            return Refit(before, before, live_mean, 0)
        fit = SparseFit(live_mean, chunks, resume=START)
        write_fit(store, fit)  # from here on, new chunks are encoded with the new mean
    reencoded = _reencode(store, fit, progress)
    done = replace(fit, resume=None)
    write_fit(store, done)
    return Refit(before, done, live_mean, reencoded)


def _reencode(store: Store, fit: SparseFit, progress: Callable[[int], None] | None) -> int:
    encoder = Bm25Encoder(fit.avg_len)
    keys = [fields.TITLE, fields.TEXT, fields.REVISION]
    reencoded = 0
    for hits, offset in _pages(store, fit.resume or None, keys):
        for revision, group in groupby(sorted(hits, key=_revision_key), key=_revision):
            _write_sparse(store, encoder, list(group), revision)
        reencoded += len(hits)
        if offset is not None:
            write_fit(store, replace(fit, resume=offset))
        if progress is not None:
            progress(len(hits))
    return reencoded


def _revision(hit: Hit) -> int | None:
    value = hit.payload.get(fields.REVISION)
    return None if value is None else int(value)


def _revision_key(hit: Hit) -> tuple[bool, int]:
    revision = _revision(hit)
    return (revision is not None, revision or 0)


def _write_sparse(
    store: Store, encoder: Bm25Encoder, hits: list[Hit], revision: int | None
) -> None:
    """Only onto chunks still of the revision read: a chunk replaced meanwhile (a newer version
    of its document, encoded with the new mean already) is left as it is."""
    vectors = encoder.encode_documents([chunk_text(hit.payload) for hit in hits])
    store.update_vectors(
        [
            models.PointVectors(id=hit.id, vector={SPARSE_VECTOR: vector})
            for hit, vector in zip(hits, vectors, strict=True)
        ],
        condition=selectors.at_revision(revision),
    )
