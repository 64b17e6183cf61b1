"""Prepare a tier: a data directory the real service serves, loaded through the store layer (no
HTTP ingest, no model run for cached or derived vectors) and then indexed as the ingest command
leaves it (the HNSW index built past SEARCH_HNSW_THRESHOLD chunks), plus the same points as
plain files (`dense.f32`, `points.jsonl`) for the peer engines."""

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from qdrant_client import models

from app.embeddings.dense import DIMENSION, MODEL_NAME, DenseEncoder, HashingEncoder
from app.embeddings.sparse import DEFAULT_AVG_LEN, B, Bm25Encoder, K
from app.ingest.pipeline import chunk_payload, chunk_point_id
from app.ingest.sparse_fit import SparseFit, mean_length, write_fit
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR
from bench.corpus import Chunk, derived_chunks, embed_text, mix_vectors, real_chunks
from bench.encoder import CachedEncoder

COLLECTION = "astrolabe"
UPSERT_BATCH = 512


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
}


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


def payload_keys() -> str:
    sample = real_chunks({"x": "A sentence."})[0]
    return ",".join(sorted(chunk_payload(sample.doc, 0, 1, sample.span)))


def payload_layout() -> str:
    """The chunk payload's keys, and how the sparse vectors are encoded: a tier written in an
    older layout is rebuilt."""
    return f"{payload_keys()};bm25 k={K} b={B} fitted"


def tier_dir(root: Path, tier: str) -> Path:
    return root / "tiers" / tier


def model_encoder(cache: Path, hashing: bool) -> CachedEncoder:
    def real() -> DenseEncoder:
        from app.embeddings.dense import MiniLMEncoder

        return MiniLMEncoder()

    if hashing:
        return CachedEncoder(cache, "hashing-test-encoder", DIMENSION, HashingEncoder)
    return CachedEncoder(cache, MODEL_NAME, DIMENSION, real)


def build_points(
    tier: Tier, docs: dict[str, str], encoder: CachedEncoder
) -> tuple[list[Chunk], np.ndarray]:
    real = real_chunks(docs, tier.real_docs)
    vectors = encoder.encode_array([embed_text(c.doc, c.text) for c in real])
    encoder.save()
    extra = max(0, tier.chunks - len(real))
    if not extra:
        return real, vectors
    derived = list(derived_chunks(real, extra))
    a = np.array([pa for _, pa, _ in derived])
    b = np.array([pb for _, _, pb in derived])
    mixed = mix_vectors(vectors, a, b)
    return real + [chunk for chunk, _, _ in derived], np.concatenate([vectors, mixed])


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
        if saved.get("encoder") == encoder.name and saved.get("layout") == payload_layout():
            return Prepared(**saved)
    points, vectors = _fitting_files(out, tier)
    if not points:
        chunks, vectors = build_points(tier, docs, encoder)
        write_peer_files(out, chunks, vectors)
        points, vectors = read_peer_files(out)
        shutil.rmtree(out / "peers", ignore_errors=True)  # the peers' indexes of other points
    log(f"{tier.name}: {len(points)} chunks, writing through the store layer")
    shutil.rmtree(out / "data", ignore_errors=True)
    seconds, optimize_seconds, hnsw = load_store(out / "data", points, vectors)
    prepared = Prepared(
        tier=tier.name,
        points=len(points),
        documents=len({p["doc_key"] for p in points}),
        encoder=encoder.name,
        load_seconds=round(seconds, 1),
        upsert_points_per_s=round(len(points) / seconds),
        layout=payload_layout(),
        optimize_seconds=round(optimize_seconds, 1),
        hnsw_chunks=hnsw,
    )
    marker.write_text(json.dumps(asdict(prepared)))
    return prepared


def _fitting_files(out: Path, tier: Tier) -> tuple[list[dict[str, Any]], np.ndarray]:
    """The tier's plain files when they hold its points in the current payload layout (as
    `prepare_files` leaves them for `bench.hnsw`), else nothing."""
    if not (out / "points.jsonl").exists() or not (out / "dense.f32").exists():
        return [], np.empty((0, DIMENSION), np.float32)
    with (out / "points.jsonl").open() as lines:
        first = json.loads(lines.readline() or "{}")
    layout = ",".join(sorted(set(first) - {"id", "embed_text"}))
    if layout != payload_keys():
        return [], np.empty((0, DIMENSION), np.float32)
    points, vectors = read_peer_files(out)
    if len(points) != len(vectors) or tier.chunks not in (0, len(points)):
        return [], np.empty((0, DIMENSION), np.float32)
    return points, vectors


def prepare_files(root: Path, tier: Tier, docs: dict[str, str], encoder: CachedEncoder) -> Path:
    """Only the tier's points as plain files (no data directory), unless they are there: what
    `bench.hnsw` loads itself."""
    out = tier_dir(root, tier.name)
    if not (out / "points.jsonl").exists() or not (out / "dense.f32").exists():
        chunks, vectors = build_points(tier, docs, encoder)
        write_peer_files(out, chunks, vectors)
    return out


def load_store(
    data_dir: Path, points: list[dict[str, Any]], vectors: np.ndarray
) -> tuple[float, float, int]:
    """Seconds to upsert, seconds of the ingest command's HNSW build after it, chunks indexed."""
    from app.cli import optimize_if_worth_it
    from app.config import Settings

    store = EdgeStore(data_dir, COLLECTION, facet_index=False)
    try:
        started = time.perf_counter()
        upsert_points(store, points, vectors)
        loaded = time.perf_counter()
        optimize_if_worth_it(store, Settings().hnsw_threshold, len(points))
        optimized = time.perf_counter()
        index = store.vector_index()
    finally:
        store.close()
    return loaded - started, optimized - loaded, index.hnsw


def upsert_points(store: EdgeStore, points: list[dict[str, Any]], vectors: np.ndarray) -> None:
    """Points as `write_peer_files` keeps them: the stored payload plus `id` and `embed_text`.
    BM25 fitted to them as the Indexer fits it (their mean length, kept in the index)."""
    texts = [str(p["embed_text"]) for p in points]
    fit = SparseFit(mean_length(texts), len(texts)) if texts else None
    if fit is not None:
        write_fit(store, fit)
    sparse = Bm25Encoder(fit.avg_len if fit is not None else DEFAULT_AVG_LEN)
    for start in range(0, len(points), UPSERT_BATCH):
        part = points[start : start + UPSERT_BATCH]
        bm25 = sparse.encode_documents([str(p["embed_text"]) for p in part])
        store.upsert(
            [
                models.PointStruct(
                    id=str(p["id"]),
                    vector={DENSE_VECTOR: vectors[start + n].tolist(), SPARSE_VECTOR: bm25[n]},
                    payload={k: v for k, v in p.items() if k not in ("id", "embed_text")},
                )
                for n, p in enumerate(part)
            ]
        )


def write_peer_files(out: Path, chunks: list[Chunk], vectors: np.ndarray) -> None:
    out.mkdir(parents=True, exist_ok=True)
    np.ascontiguousarray(vectors, np.float32).tofile(out / "dense.f32")
    with (out / "points.jsonl").open("w") as lines:
        for c in chunks:
            payload = chunk_payload(c.doc, c.index, c.total, c.span)
            payload["id"] = chunk_point_id(c.doc.key, c.index)
            payload["embed_text"] = embed_text(c.doc, c.text)
            lines.write(json.dumps(payload) + "\n")


def read_peer_files(out: Path) -> tuple[list[dict[str, Any]], np.ndarray]:
    with (out / "points.jsonl").open() as lines:
        points = [json.loads(line) for line in lines]
    vectors = np.fromfile(out / "dense.f32", dtype=np.float32).reshape(-1, DIMENSION)
    return points, vectors
