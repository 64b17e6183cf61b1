"""The engine never writes again the files `app.store.sealed` names (which a copy shares with the
served shard by hard links): after every kind of write, an optimize that merges the segments, a
close and another open, each of those files holds the bytes it held, wherever the engine's own
path to it went."""

import hashlib
import os
from pathlib import Path

import numpy as np
import qdrant_edge as qe
from qdrant_client.http import models

from app.filters.selectors import of_document
from app.store import fields
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR
from app.store.sealed import shareable_files
from tests.store.test_doc_facets import point

# As a rebuild's copy is optimized (`shard_server.open_shard_store`): every point indexed.
SEALED = qe.EdgeOptimizersConfig(indexing_threshold=1, default_segment_number=2)
DOC = {
    "doc_type": "note",
    "owner": "alice",
    "acl": ["group:eng"],
    "modified_at": 100,
    "folder": "/A",
    "tags": ["red"],
    "category": "Work",
}


def chunk(n: int, seed: int = 0, **changes: object) -> models.PointStruct:
    """Document `note:n`'s one chunk, its dense vector drawn from (n, seed)."""
    dense = np.random.default_rng([n, seed]).standard_normal(384)
    made = point(f"note:{n}", 0, DOC | changes)
    assert isinstance(made.vector, dict)
    made.vector[DENSE_VECTOR] = (dense / np.linalg.norm(dense)).tolist()
    return made


def of(n: int) -> models.Filter:
    return models.Filter(must=[of_document(f"note:{n}")])


def sealed_store(data_dir: Path, count: int = 1000) -> EdgeStore:
    """A store whose shard has sealed segments (`count` chunks) and an appendable one."""
    store = EdgeStore(data_dir, "c", optimizers=SEALED)
    store.upsert([chunk(n) for n in range(count)])
    store.optimize()
    store.upsert([chunk(n) for n in range(count, count + 50)])
    store.flush()
    return store


def write_every_kind(store: EdgeStore, seed: int) -> None:
    """Points of the sealed segments written again, given new payloads and vectors, deleted."""
    store.upsert([chunk(n, seed, tags=["blue"]) for n in range(0, 100)])
    store.upsert([chunk(n, seed) for n in range(2000, 2050)])
    store.set_payload({fields.TAGS: ["green"]}, of(200 + seed))
    vectors = chunk(300 + seed, seed + 1).vector
    assert isinstance(vectors, dict)
    store.update_vectors([models.PointVectors(id=chunk(300 + seed).id, vector=vectors)])
    for n in range(400 + 10 * seed, 410 + 10 * seed):
        store.delete(of(n))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_engine_never_writes_a_shareable_file_again(tmp_path: Path) -> None:
    store = sealed_store(tmp_path / "data")
    shared = sorted(shareable_files(store.path))
    names = {path.name for path in shared}
    assert {"matrix.dat", "inverted_index.dat", "page_0.dat", "point_to_values.bin"} <= names
    assert any(name.startswith("links") or name == "graph.bin" for name in names), names
    witnesses = tmp_path / "witnesses"  # a link of each: its inode, whatever the engine does
    witnesses.mkdir()
    held = {}
    for n, path in enumerate(shared):
        os.link(path, witnesses / str(n))
        held[witnesses / str(n)] = (path, digest(path))

    write_every_kind(store, seed=1)
    store.flush()
    store.optimize()
    write_every_kind(store, seed=2)
    store.close()
    EdgeStore(tmp_path / "data", "c", optimizers=SEALED).close()

    written = [str(path) for witness, (path, was) in held.items() if digest(witness) != was]
    assert not written, written
