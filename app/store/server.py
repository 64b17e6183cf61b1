"""Server mode: a Qdrant server or cluster through qdrant-client (`SEARCH_QDRANT_URL`).
Also runs against qdrant-client's local mode (`:memory:`) for the contract tests."""

from collections.abc import Sequence
from typing import Any

import httpx
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from app.embeddings.dense import DIMENSION
from app.store.base import Hit
from app.store.errors import IndexConflict, guarded
from app.store.fields import DENSE_VECTOR, PAYLOAD_INDEXES, SPARSE_VECTOR, IndexType

_SERVER_TYPES = {
    IndexType.KEYWORD: models.PayloadSchemaType.KEYWORD,
    IndexType.INTEGER: models.PayloadSchemaType.INTEGER,
}


def _unreachable(exc: Exception) -> bool:
    """Down, restarting or behind a failing proxy: worth a retry, not a bug."""
    if isinstance(exc, UnexpectedResponse):
        return exc.status_code in (502, 503, 504)
    return isinstance(exc, httpx.TransportError | ResponseHandlingException | ConnectionError)


def _hit(point: Any) -> Hit:
    return Hit(
        id=str(point.id),
        score=float(getattr(point, "score", 0.0) or 0.0),
        payload=dict(point.payload or {}),
    )


class ServerStore:
    backend = "server"

    def __init__(self, url: str, api_key: str | None, collection: str) -> None:
        self._client = (
            QdrantClient(location=":memory:")
            if url == ":memory:"
            else QdrantClient(url=url, api_key=api_key)
        )
        self._collection = collection
        if not self._client.collection_exists(collection):
            self._client.create_collection(
                collection,
                vectors_config={
                    DENSE_VECTOR: models.VectorParams(
                        size=DIMENSION, distance=models.Distance.COSINE
                    )
                },
                sparse_vectors_config={
                    SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)
                },
            )
        self.created_indexes = self._ensure_payload_indexes()

    def _ensure_payload_indexes(self) -> list[str]:
        schema = self._client.get_collection(self._collection).payload_schema
        created = []
        for field, wanted in PAYLOAD_INDEXES.items():
            info = schema.get(field)
            if info is None:
                self._client.create_payload_index(
                    self._collection, field, _SERVER_TYPES[wanted], wait=True
                )
                created.append(field)
            elif info.data_type != _SERVER_TYPES[wanted]:
                raise IndexConflict(
                    f"payload index '{field}' exists as {info.data_type}, this service needs"
                    f" {wanted.value}: drop it or use a fresh collection"
                )
        return created

    @guarded(_unreachable)
    def upsert(self, points: Sequence[models.PointStruct]) -> None:
        if points:
            self._client.upsert(self._collection, list(points), wait=True)

    @guarded(_unreachable)
    def delete(self, selector: models.Filter) -> None:
        self._client.delete(self._collection, models.FilterSelector(filter=selector), wait=True)

    @guarded(_unreachable)
    def query(
        self,
        *,
        query: models.Query | None,
        using: str | None = None,
        prefetch: Sequence[models.Prefetch] = (),
        filter: models.Filter | None = None,
        limit: int,
        offset: int = 0,
        score_threshold: float | None = None,
    ) -> list[Hit]:
        response = self._client.query_points(
            self._collection,
            query=query,
            using=using,
            prefetch=list(prefetch) or None,
            query_filter=filter,
            limit=limit,
            offset=offset,
            score_threshold=score_threshold,
            with_payload=True,
        )
        return [_hit(p) for p in response.points]

    @guarded(_unreachable)
    def retrieve(self, ids: Sequence[str]) -> list[Hit]:
        return [
            _hit(p) for p in self._client.retrieve(self._collection, list(ids), with_payload=True)
        ]

    @guarded(_unreachable)
    def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        records = self._client.retrieve(self._collection, list(ids), with_vectors=[DENSE_VECTOR])
        return {
            str(r.id): list(r.vector[DENSE_VECTOR])  # type: ignore[arg-type]
            for r in records
            if isinstance(r.vector, dict)
        }

    @guarded(_unreachable)
    def scroll(self, filter: models.Filter, limit: int) -> list[Hit]:
        hits: list[Hit] = []
        offset: Any = None
        while len(hits) < limit:
            points, offset = self._client.scroll(
                self._collection,
                scroll_filter=filter,
                limit=min(256, limit - len(hits)),
                offset=offset,
                with_payload=True,
            )
            hits.extend(_hit(p) for p in points)
            if offset is None:
                break
        return hits

    @guarded(_unreachable)
    def count(self, filter: models.Filter | None = None) -> int:
        return self._client.count(self._collection, count_filter=filter, exact=True).count

    @guarded(_unreachable)
    def facet(self, key: str, filter: models.Filter, limit: int) -> dict[str, int]:
        response = self._client.facet(
            self._collection, key, facet_filter=filter, limit=limit, exact=True
        )
        return {str(hit.value): hit.count for hit in response.hits}

    def close(self) -> None:
        self._client.close()
