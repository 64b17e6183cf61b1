"""PCA of the result embeddings for the /viz map: 2D and 3D coordinates, the query projected
into the same space."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.store.base import Hit, Store


@dataclass
class Projection:
    coordinates_2d: list[list[float]]
    coordinates_3d: list[list[float]]
    query_2d: list[float] | None
    query_3d: list[float] | None
    variance: list[float]


EMPTY = Projection([], [], None, None, [])


def project_hits(store: Store, hits: Sequence[Hit], query: list[float] | None) -> Projection:
    """PCA of these hits' dense vectors (read from the store), the query in the same space."""
    vectors = store.dense_vectors([hit.id for hit in hits])
    return project([vectors[hit.id] for hit in hits if hit.id in vectors], query)


def project(vectors: list[list[float]], query: list[float] | None) -> Projection:
    """One point per vector. A single point has no spread: it sits at the origin and the query
    at its distance along the first axis."""
    if not vectors:
        return EMPTY
    if len(vectors) == 1:
        gap = 0.0 if query is None else float(np.linalg.norm(np.subtract(query, vectors[0])))
        origin = Projection([[0.0, 0.0]], [[0.0, 0.0, 0.0]], None, None, [])
        if query is not None:
            origin.query_2d, origin.query_3d = [round(gap, 5), 0.0], [round(gap, 5), 0.0, 0.0]
        return origin
    matrix = np.asarray(vectors, dtype=np.float64)
    mean = matrix.mean(axis=0)
    centered = matrix - mean
    _, singular, components = np.linalg.svd(centered, full_matrices=False)
    spread = singular**2
    total = float(spread.sum()) or 1.0
    k = min(3, components.shape[0])
    basis = components[:k]
    points = centered @ basis.T
    points = np.pad(points, ((0, 0), (0, 3 - k)))
    query_point = None
    if query is not None:
        query_point = np.pad((np.asarray(query) - mean) @ basis.T, (0, 3 - k))
    return Projection(
        coordinates_2d=_round(points[:, :2]),
        coordinates_3d=_round(points[:, :3]),
        query_2d=[round(float(x), 5) for x in query_point[:2]] if query_point is not None else None,
        query_3d=[round(float(x), 5) for x in query_point[:3]] if query_point is not None else None,
        variance=[round(float(v) / total, 5) for v in spread[:k]],
    )


def _round(points: "np.ndarray[tuple[int, int], np.dtype[np.float64]]") -> list[list[float]]:
    return [[round(float(x), 5) for x in row] for row in points]
