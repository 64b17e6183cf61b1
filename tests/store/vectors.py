"""Points for the store tests that search a real HNSW graph: vectors shaped like text
embeddings, and point ids numbered as the tests count them."""

import numpy as np

DIM = 384


def unit_vectors(rng: np.random.Generator, count: int) -> np.ndarray:
    """Unit vectors of a low intrinsic dimension (as text embeddings have), so the graph search
    finds a point from its own vector."""
    basis = np.random.default_rng(0).standard_normal((12, DIM))
    vectors = rng.standard_normal((count, 12)) @ basis
    normalised: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return normalised.astype(np.float32)


def point_id(n: int) -> str:
    return f"00000000-0000-0000-0000-{n:012d}"
