"""Prepare a tier: a data directory the real service serves, loaded through the store layer (no
HTTP ingest, no model run for cached or derived vectors) and then indexed as the ingest command
leaves it (the HNSW index built past SEARCH_HNSW_THRESHOLD chunks), plus the same points as
plain files (`dense.f32`, `points.jsonl`) for the peer engines."""

import itertools
import json
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
from qdrant_client.http import models

from app.embeddings.dense import DenseEncoder, HashingEncoder
from app.embeddings.sparse import DEFAULT_AVG_LEN, Bm25Encoder, token_count
from app.index_settings import BM25_B, BM25_K, DIMENSION, MODEL_NAME
from app.ingest.pipeline import chunk_payload, chunk_point_id
from app.ingest.sparse_fit import SparseFit, mean_length, read_fit, write_fit
from app.store import segments
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR
from bench.harness.corpus import (
    DERIVATION,
    Chunk,
    derived_chunks,
    embed_text,
    mix_vectors,
    real_chunks,
)
from bench.harness.encoder import CachedEncoder

COLLECTION = "astrolabe"
UPSERT_BATCH = 512
DERIVED_MARKER = "derivation.json"  # written last: the plain files are complete


@dataclass(frozen=True)
class Tier:
    name: str
    chunks: int  # target size; 0: the real documents only
    real_docs: int | None = None  # only the first N real documents (the smoke tier)


TIERS = {
    "smoke": Tier("smoke", 0, real_docs=300),
    "11k": Tier("11k", 0),
    "100k": Tier("100k", 100_000),
    "300k": Tier("300k", 300_000),
    "1m": Tier("1m", 1_000_000),
}
DERIVED_BLOCK = 50_000  # derived points made, mixed and written at a time (the 1m tier's memory)
HTTP_LOAD_MAX = 300_000  # the live benchmark loads larger tiers through the store layer


@dataclass
class Prepared:
    tier: str
    points: int
    documents: int
    encoder: str
    load_seconds: float
    upsert_points_per_s: float
    layout: str  # the payload keys the Indexer writes: a new layout rebuilds the tier
    optimize_seconds: float = 0.0  # the ingest command's HNSW build after the load (0: none)
    hnsw_chunks: int = 0  # chunks in an HNSW index when the service starts
    derivation: int = 0  # bench.harness.corpus.DERIVATION the points were made with
    segment_chunks: int = 0  # app.store.segments.SEGMENT_CHUNKS the load kept (0: none)
    segments: int = 0  # the engine's segments after the load, the appendable one included


def payload_keys() -> str:
    sample = real_chunks({"x": "A sentence."})[0]
    return ",".join(sorted(chunk_payload(sample.doc, 0, 1, sample.span)))


def payload_layout() -> str:
    """The chunk payload's keys, and how the sparse vectors are encoded: a tier written in an
    older layout is rebuilt."""
    return f"{payload_keys()};bm25 k={BM25_K} b={BM25_B} fitted"


def tier_dir(root: Path, tier: str) -> Path:
    return root / "tiers" / tier


def live_data_dir(out: Path) -> Path:
    """The data directory the live benchmark serves in the tier directory `out`."""
    return out / "data" if TIERS[out.name].chunks > HTTP_LOAD_MAX else out / "live" / "data"


def model_encoder(cache: Path, hashing: bool) -> CachedEncoder:
    def real() -> DenseEncoder:
        from app.embeddings.dense import MiniLMEncoder

        return MiniLMEncoder()

    if hashing:
        return CachedEncoder(cache, "hashing-test-encoder", DIMENSION, HashingEncoder)
    return CachedEncoder(cache, MODEL_NAME, DIMENSION, real)


def real_points(
    tier: Tier, docs: dict[str, str], encoder: CachedEncoder
) -> tuple[list[Chunk], np.ndarray]:
    """The tier's real chunks and their vectors (from the cache, or the model once)."""
    real = real_chunks(docs, tier.real_docs)
    vectors = encoder.encode_array([embed_text(c.doc, c.text) for c in real])
    encoder.save()
    return real, vectors


def derived_points(
    real: list[Chunk], vectors: np.ndarray, count: int, **variant: Any
) -> Iterator[tuple[list[Chunk], np.ndarray]]:
    """`count` derived chunks (bench.harness.corpus.derived_chunks) and their mixed vectors, in
    blocks."""
    made = derived_chunks(real, count, **variant)
    while block := list(itertools.islice(made, DERIVED_BLOCK)):
        a = np.array([pa for _, pa, _ in block])
        b = np.array([pb for _, _, pb in block])
        yield [chunk for chunk, _, _ in block], mix_vectors(vectors, a, b)


def prepare(
    root: Path,
    tier: Tier,
    docs: dict[str, str],
    encoder: CachedEncoder,
    log: Callable[[str], None] = print,
) -> Prepared:
    """Build the tier's data directory unless a complete one is there."""
    out = tier_dir(root, tier.name)
    marker = out / "prepared.json"
    if marker.exists():
        saved = json.loads(marker.read_text())
        if (
            saved.get("encoder") == encoder.name
            and saved.get("layout") == payload_layout()
            and saved.get("derivation") == DERIVATION
            and saved.get("segment_chunks") == segments.SEGMENT_CHUNKS
        ):
            return Prepared(**saved)
    if not _current_files(out, tier):
        write_tier_files(out, tier, docs, encoder)
        shutil.rmtree(out / "peers", ignore_errors=True)  # the peers' indexes of other points
    log(f"{tier.name}: {point_count(out)} chunks, writing through the store layer")
    shutil.rmtree(out / "data", ignore_errors=True)
    loaded = load_store(out / "data", out)
    prepared = Prepared(
        tier=tier.name,
        points=loaded.points,
        documents=loaded.documents,
        encoder=encoder.name,
        load_seconds=round(loaded.seconds, 1),
        upsert_points_per_s=round(loaded.points / loaded.seconds),
        layout=payload_layout(),
        optimize_seconds=round(loaded.optimize_seconds, 1),
        hnsw_chunks=loaded.hnsw,
        derivation=DERIVATION,
        segment_chunks=segments.SEGMENT_CHUNKS,
        segments=loaded.segments,
    )
    marker.write_text(json.dumps(asdict(prepared)))
    return prepared


def point_count(out: Path) -> int:
    return (out / "dense.f32").stat().st_size // (DIMENSION * 4)


def _current_files(out: Path, tier: Tier) -> bool:
    """Whether the tier's plain files hold its points as the current corpus functions and payload
    layout make them (as `prepare_files` leaves them for `bench.index.hnsw`)."""
    if not all((out / name).exists() for name in ("points.jsonl", "dense.f32", DERIVED_MARKER)):
        return False
    if json.loads((out / DERIVED_MARKER).read_text()).get("derivation") != DERIVATION:
        return False
    with (out / "points.jsonl").open() as lines:
        first = json.loads(lines.readline() or "{}")
    layout = ",".join(sorted(set(first) - {"id", "embed_text"}))
    return layout == payload_keys() and tier.chunks in (0, point_count(out))


def prepare_files(root: Path, tier: Tier, docs: dict[str, str], encoder: CachedEncoder) -> Path:
    """Only the tier's points as plain files (no data directory), unless they are there: what
    `bench.index.hnsw` and the live benchmark load themselves."""
    out = tier_dir(root, tier.name)
    if not _current_files(out, tier):
        write_tier_files(out, tier, docs, encoder)
        shutil.rmtree(out / "peers", ignore_errors=True)
    return out


@dataclass(frozen=True)
class Loaded:
    points: int
    documents: int
    seconds: float  # to upsert
    optimize_seconds: float  # the ingest command's HNSW build after it
    hnsw: int  # chunks indexed
    segments: int


def load_store(data_dir: Path, out: Path) -> Loaded:
    """The tier's plain files through the store layer, streamed, then indexed as `ingest` does."""
    from app.cli.indexing import optimize_if_worth_it
    from app.config import Settings
    from app.store.open import build_full_segment

    store = EdgeStore(data_dir, COLLECTION, facet_index=False)
    try:
        started = time.perf_counter()
        built = [0]  # points written when a segment's graph was last built

        def on_batch(written: int) -> None:
            if build_full_segment(store):
                built[0] = written

        points, documents = upsert_file(store, out, on_batch=on_batch)
        loaded = time.perf_counter()
        optimize_if_worth_it(store, Settings().hnsw_threshold, points - built[0])
        optimized = time.perf_counter()
        index = store.vector_index()
        shape = store.segments()
    finally:
        store.close()
    return Loaded(
        points, documents, loaded - started, optimized - loaded, index.hnsw, shape["segments"]
    )


def upsert_points(store: EdgeStore, points: list[dict[str, Any]], vectors: np.ndarray) -> None:
    """Points as `write_points` keeps them (the stored payload plus `id` and `embed_text`), BM25
    fitted as the Indexer fits it: to the first points a store gets (their mean length, kept in
    the index)."""
    texts = [str(p["embed_text"]) for p in points]
    sparse = _fitted(store, lambda: SparseFit(mean_length(texts), len(texts)) if texts else None)
    for start in range(0, len(points), UPSERT_BATCH):
        end = start + UPSERT_BATCH
        _upsert(store, sparse, points[start:end], vectors[start:end])


def upsert_file(
    store: EdgeStore,
    out: Path,
    name: str = "points",
    on_batch: Callable[[int], object] | None = None,
) -> tuple[int, int]:
    """`upsert_points` streamed from `out`'s plain files (`name` as for `read_peer_files`: the
    1m tier's would not fit in memory beside the engine); returns how many points and
    documents. `on_batch` gets the number of points written after each batch."""
    sparse = _fitted(store, lambda: _fit_of(out / f"{name}.jsonl"))
    dense = out / ("dense.f32" if name == "points" else f"{name}.f32")
    vectors = np.memmap(dense, dtype=np.float32, mode="r").reshape(-1, DIMENSION)
    documents: set[str] = set()
    start = 0
    for part in batched_points(out / f"{name}.jsonl", UPSERT_BATCH):
        _upsert(store, sparse, part, vectors[start : start + len(part)])
        documents.update(str(p["doc_key"]) for p in part)
        start += len(part)
        if on_batch is not None:
            on_batch(start)
    return start, len(documents)


def _fitted(store: EdgeStore, measure: Callable[[], SparseFit | None]) -> Bm25Encoder:
    """The BM25 encoder of the store's fit; a store without one is fitted by `measure`."""
    fit = read_fit(store)
    if fit is None:
        fit = measure()
        if fit is not None:
            write_fit(store, fit)
    return Bm25Encoder(fit.avg_len if fit is not None else DEFAULT_AVG_LEN)


def _upsert(
    store: EdgeStore, sparse: Bm25Encoder, part: list[dict[str, Any]], vectors: np.ndarray
) -> None:
    bm25 = sparse.encode_documents([str(p["embed_text"]) for p in part])
    store.upsert(
        [
            models.PointStruct(
                id=str(p["id"]),
                vector={DENSE_VECTOR: vectors[n].tolist(), SPARSE_VECTOR: bm25[n]},
                payload={k: v for k, v in p.items() if k not in ("id", "embed_text")},
            )
            for n, p in enumerate(part)
        ]
    )


def _fit_of(path: Path) -> SparseFit | None:
    """BM25's mean chunk length over a points file (as `mean_length`), in one streamed pass."""
    tokens = count = 0
    for part in batched_points(path, 4096):
        tokens += sum(token_count(str(p["embed_text"])) for p in part)
        count += len(part)
    return SparseFit(max(1.0, tokens / count), count) if count else None


def batched_points(path: Path, size: int) -> Iterator[list[dict[str, Any]]]:
    """The points of a points file, `size` at a time (the whole file never in memory)."""
    with path.open() as lines:
        while part := [json.loads(line) for line in itertools.islice(lines, size)]:
            yield part


def write_tier_files(out: Path, tier: Tier, docs: dict[str, str], encoder: CachedEncoder) -> None:
    """The tier's points as plain files, derived points made and written block by block."""
    out.mkdir(parents=True, exist_ok=True)
    (out / DERIVED_MARKER).unlink(missing_ok=True)
    real, vectors = real_points(tier, docs, encoder)
    with (out / "dense.f32").open("wb") as dense, (out / "points.jsonl").open("w") as lines:
        write_points(dense, lines, real, vectors)
        for chunks, mixed in derived_points(real, vectors, max(0, tier.chunks - len(real))):
            write_points(dense, lines, chunks, mixed)
    (out / DERIVED_MARKER).write_text(json.dumps({"derivation": DERIVATION}))


def write_points(
    dense: IO[bytes], lines: IO[str], chunks: list[Chunk], vectors: np.ndarray
) -> None:
    dense.write(np.ascontiguousarray(vectors, np.float32).tobytes())
    for c in chunks:
        payload = chunk_payload(c.doc, c.index, c.total, c.span)
        payload["id"] = chunk_point_id(c.doc.key, c.index)
        payload["embed_text"] = embed_text(c.doc, c.text)
        lines.write(json.dumps(payload) + "\n")


PEER_KEYS = ("id", "embed_text", "readers", "modified_at", "category", "folders", "tags")


def read_peer_files(out: Path, name: str = "points") -> tuple[list[dict[str, Any]], np.ndarray]:
    """The points the peers load and the filter oracle reads (only the keys they use: the 1m
    tier's whole payloads would not fit beside them), and their vectors. `name`: the tier's
    points, or `trickle` (bench.index.live's new documents)."""
    points = [
        {k: p[k] for k in PEER_KEYS}
        for part in batched_points(out / f"{name}.jsonl", 4096)
        for p in part
    ]
    dense = out / ("dense.f32" if name == "points" else f"{name}.f32")
    return points, np.fromfile(dense, dtype=np.float32).reshape(-1, DIMENSION)
