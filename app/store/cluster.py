"""How server mode lays out its collection on a Qdrant cluster, and how it reads and writes it.

Chosen for a cluster (docs/deployment.md):
- writes use `WriteOrdering.STRONG`: every write goes through the shard's leader replica, so the
  steps of a document replacement (new chunks, stale chunks deleted, placeholder deleted) apply
  in that order on every replica, and two replicas of the service writing the same document
  cannot interleave differently on two copies of a shard;
- reads use `ReadConsistency.MAJORITY`: a search or a revision check is answered by most
  replicas of a shard, so a replica that lags (just restarted) cannot resurrect a deleted chunk
  or hide a new revision. With `replication_factor` 1 both are free.
"""

from dataclasses import dataclass
from typing import Any

from qdrant_client.http import models

from app.config import Settings
from app.index_settings import DIMENSION
from app.store.errors import IndexConflict
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR
from app.store.quantization import QUANTILE, rescored

WRITE_ORDERING = models.WriteOrdering.STRONG
READ_CONSISTENCY = models.ReadConsistencyType.MAJORITY
DISTANCE = models.Distance.COSINE
SPARSE_MODIFIER = models.Modifier.IDF


class CollectionMismatch(IndexConflict):
    """An existing collection was made for other vectors: writing into it would corrupt it."""


@dataclass(frozen=True)
class CollectionLayout:
    shard_number: int = 1
    replication_factor: int = 1
    write_consistency_factor: int = 1
    on_disk: bool = False
    quantization: bool = True  # int8, as the embedded engine (app.store.quantization)
    hnsw_m: int = 16
    hnsw_ef_construct: int = 100

    @classmethod
    def from_settings(cls, settings: Settings) -> "CollectionLayout":
        return cls(
            shard_number=settings.qdrant_shard_number,
            replication_factor=settings.qdrant_replication_factor,
            write_consistency_factor=settings.qdrant_write_consistency_factor,
            on_disk=settings.qdrant_on_disk,
            quantization=settings.qdrant_quantization == "int8",
            hnsw_m=settings.qdrant_hnsw_m,
            hnsw_ef_construct=settings.qdrant_hnsw_ef_construct,
        )

    def create_collection_arguments(self) -> dict[str, Any]:
        """Keyword arguments of `QdrantClient.create_collection` (collection name aside)."""
        quantization = (
            models.ScalarQuantization(
                scalar=models.ScalarQuantizationConfig(
                    type=models.ScalarType.INT8, quantile=QUANTILE, always_ram=True
                )
            )
            if self.quantization
            else None
        )
        dense = models.VectorParams(
            size=DIMENSION,
            distance=DISTANCE,
            on_disk=self.on_disk,
            hnsw_config=models.HnswConfigDiff(m=self.hnsw_m, ef_construct=self.hnsw_ef_construct),
            quantization_config=quantization,
        )
        sparse = models.SparseVectorParams(
            modifier=SPARSE_MODIFIER, index=models.SparseIndexParams(on_disk=self.on_disk)
        )
        return {
            "vectors_config": {DENSE_VECTOR: dense},
            "sparse_vectors_config": {SPARSE_VECTOR: sparse},
            "shard_number": self.shard_number,
            "replication_factor": self.replication_factor,
            "write_consistency_factor": self.write_consistency_factor,
            "on_disk_payload": self.on_disk,
        }

    def search_params(self) -> models.SearchParams | None:
        """Dense searches on a quantized collection: oversample, then rescore on the originals."""
        return rescored() if self.quantization else None


def check_collection(name: str, params: models.CollectionParams) -> None:
    """One line naming what differs when `name` holds other vectors than this service writes."""
    vectors = params.vectors if isinstance(params.vectors, dict) else {}
    dense = vectors.get(DENSE_VECTOR)
    sparse = (params.sparse_vectors or {}).get(SPARSE_VECTOR)
    problems = []
    if dense is None:
        problems.append(f"no dense vector '{DENSE_VECTOR}'")
    else:
        if dense.size != DIMENSION:
            problems.append(f"dense size {dense.size}, not {DIMENSION}")
        if dense.distance != DISTANCE:
            problems.append(f"distance {dense.distance.value}, not {DISTANCE.value}")
    if sparse is None:
        problems.append(f"no sparse vector '{SPARSE_VECTOR}'")
    elif sparse.modifier != SPARSE_MODIFIER:
        modifier = sparse.modifier.value if sparse.modifier else "none"
        problems.append(f"sparse modifier {modifier}, not {SPARSE_MODIFIER.value}")
    if problems:
        raise CollectionMismatch(
            f"collection '{name}' was made for other vectors ({'; '.join(problems)}):"
            " use another SEARCH_COLLECTION or migrate into a fresh one"
        )
