"""Server mode: a Qdrant server or cluster through qdrant-client (`SEARCH_QDRANT_URL`).
Also runs against qdrant-client's local mode (`:memory:`) for the contract tests."""

import logging
import tempfile
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast

import httpx
from qdrant_client import QdrantClient
from qdrant_client.http import models

from app.config import Settings
from app.index_settings import IndexSettings
from app.store.base import Copied, Hit, Query, VectorIndex
from app.store.cluster import READ_CONSISTENCY, WRITE_ORDERING, CollectionLayout, check_collection
from app.store.errors import (
    CopyFailed,
    EngineFailed,
    EngineUnavailable,
    IndexConflict,
    StoreError,
    guarded,
)
from app.store.fields import DENSE_VECTOR, PAYLOAD_INDEXES, IndexType
from app.store.retry import is_engine_answer, is_transient, with_retries

R = TypeVar("R")
SNAPSHOT_FILE = "collection.snapshot"  # what `copy_to` writes
SNAPSHOT_ATTEMPTS = 3
log = logging.getLogger(__name__)

_SERVER_TYPES = {
    IndexType.KEYWORD: models.PayloadSchemaType.KEYWORD,
    IndexType.INTEGER: models.PayloadSchemaType.INTEGER,
}


def _payload_selector(payload_keys: Sequence[str] | None) -> bool | list[str]:
    """None: the whole payload; empty: none; else these keys."""
    if payload_keys is None:
        return True
    return list(payload_keys) or False


def _hit(point: Any) -> Hit:
    return Hit(
        id=str(point.id),
        score=float(getattr(point, "score", 0.0) or 0.0),
        payload=dict(point.payload or {}),
    )


class ServerStore:
    backend = "server"

    def __init__(
        self,
        url: str,
        api_key: str | None,
        collection: str,
        *,
        layout: CollectionLayout | None = None,
        grpc: bool = False,
        timeout: float = 10.0,
    ) -> None:
        self._client = (
            QdrantClient(location=":memory:")
            if url == ":memory:"
            else QdrantClient(
                url=url,
                api_key=api_key,
                prefer_grpc=grpc,
                timeout=max(1, round(timeout)),
                # Its version probe runs in a thread whose failure is a stray traceback; the
                # first real call reports an unreachable server (the images are pinned).
                check_compatibility=False,
            )
        )
        self._collection = collection
        self._url, self._api_key, self._timeout = url, api_key, timeout
        self._layout = layout or CollectionLayout()
        self._search_params = self._layout.search_params()
        try:
            self._open_collection()
            self.created_indexes = self._ensure_payload_indexes()
        except Exception as exc:
            self._client.close()
            if isinstance(exc, StoreError) or not is_transient(exc):
                raise
            raise EngineUnavailable(f"cannot reach Qdrant at {url}: {exc}") from exc

    @classmethod
    def from_settings(cls, url: str, collection: str, settings: Settings) -> "ServerStore":
        return cls(
            url,
            settings.qdrant_api_key,
            collection,
            layout=CollectionLayout.from_settings(settings),
            grpc=settings.qdrant_grpc,
            timeout=settings.qdrant_timeout,
        )

    def _call(self, call: Callable[[], R]) -> R:
        """With retries on transient failures; an error Qdrant answered becomes a 502."""
        try:
            return with_retries(call)
        except Exception as exc:
            if is_engine_answer(exc) and not is_transient(exc):
                log.error("Qdrant answered with an error: %s", exc)
                raise EngineFailed("the search engine answered with an error") from exc
            raise

    def _open_collection(self) -> None:
        """Create the collection with this layout, or check an existing one holds our vectors."""
        if not self._call(lambda: self._client.collection_exists(self._collection)):
            arguments = self._layout.create_collection_arguments()
            self._call(lambda: self._client.create_collection(self._collection, **arguments))
            return
        info = self._call(lambda: self._client.get_collection(self._collection))
        check_collection(self._collection, info.config.params)

    def _ensure_payload_indexes(self) -> list[str]:
        schema = self._call(lambda: self._client.get_collection(self._collection)).payload_schema
        created = []
        for field, wanted in PAYLOAD_INDEXES.items():
            info = schema.get(field)
            if info is None:
                create = partial(
                    self._client.create_payload_index,
                    self._collection,
                    field,
                    _SERVER_TYPES[wanted],
                    wait=True,
                )
                self._call(create)
                created.append(field)
            elif info.data_type != _SERVER_TYPES[wanted]:
                raise IndexConflict.of_field(field, info.data_type, wanted.value)
        return created

    def ensure_room(self, bytes_needed: int) -> None:
        """The server manages its own disk and answers a full one with an error."""

    @guarded(is_transient)
    def upsert(
        self, points: Sequence[models.PointStruct], condition: models.Filter | None = None
    ) -> None:
        if points:
            self._call(
                lambda: self._client.upsert(
                    self._collection,
                    list(points),
                    update_filter=condition,
                    wait=True,
                    ordering=WRITE_ORDERING,
                )
            )

    @guarded(is_transient)
    def set_payload(self, payload: dict[str, Any], selector: models.Filter) -> None:
        self._call(
            lambda: self._client.set_payload(
                self._collection,
                payload,
                points=models.FilterSelector(filter=selector),
                wait=True,
                ordering=WRITE_ORDERING,
            )
        )

    @guarded(is_transient)
    def delete(self, selector: models.Filter) -> None:
        self._call(
            lambda: self._client.delete(
                self._collection,
                models.FilterSelector(filter=selector),
                wait=True,
                ordering=WRITE_ORDERING,
            )
        )

    @guarded(is_transient)
    def query(self, q: Query) -> list[Hit]:
        response = self._call(
            lambda: self._client.query_points(
                self._collection,
                query=q.query,
                using=q.using,
                prefetch=[self._tuned(p) for p in q.prefetch] or None,
                query_filter=q.filter,
                search_params=self._search_params if q.using == DENSE_VECTOR else None,
                limit=q.limit,
                offset=q.offset,
                score_threshold=q.score_threshold,
                with_payload=_payload_selector(q.payload_keys),
                consistency=READ_CONSISTENCY,
            )
        )
        return [_hit(p) for p in response.points]

    @guarded(is_transient)
    def query_batch(self, queries: Sequence[Query]) -> list[list[Hit]]:
        requests = [
            models.QueryRequest(
                query=q.query,
                using=q.using,
                filter=q.filter,
                params=self._search_params if q.using == DENSE_VECTOR else None,
                limit=q.limit,
                score_threshold=q.score_threshold,
                with_payload=_payload_selector(q.payload_keys),
            )
            for q in queries
        ]
        responses = self._call(
            lambda: self._client.query_batch_points(
                self._collection, requests=requests, consistency=READ_CONSISTENCY
            )
        )
        return [[_hit(p) for p in response.points] for response in responses]

    def _tuned(self, prefetch: models.Prefetch) -> models.Prefetch:
        """Dense legs of a quantized collection get the rescoring search parameters."""
        if self._search_params is None or prefetch.using != DENSE_VECTOR:
            return prefetch
        return prefetch.model_copy(update={"params": self._search_params})

    @guarded(is_transient)
    def retrieve(self, ids: Sequence[str], payload_keys: Sequence[str] | None = None) -> list[Hit]:
        records = self._call(
            lambda: self._client.retrieve(
                self._collection,
                list(ids),
                with_payload=_payload_selector(payload_keys),
                consistency=READ_CONSISTENCY,
            )
        )
        return [_hit(p) for p in records]

    @guarded(is_transient)
    def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        records = self._call(
            lambda: self._client.retrieve(
                self._collection,
                list(ids),
                with_vectors=[DENSE_VECTOR],
                consistency=READ_CONSISTENCY,
            )
        )
        return {
            str(r.id): list(r.vector[DENSE_VECTOR])  # type: ignore[arg-type]
            for r in records
            if isinstance(r.vector, dict)
        }

    @guarded(is_transient)
    def scroll(self, filter: models.Filter, limit: int) -> list[Hit]:
        hits: list[Hit] = []
        offset: Any = None
        while len(hits) < limit:
            points, offset = self._scroll(offset, min(256, limit - len(hits)), filter)
            hits.extend(_hit(p) for p in points)
            if offset is None:
                break
        return hits

    def _scroll(
        self,
        offset: Any,
        limit: int,
        filter: models.Filter | None = None,
        with_payload: bool | list[str] = True,
        with_vectors: bool = False,
    ) -> tuple[list[Any], Any]:
        return self._call(
            lambda: self._client.scroll(
                self._collection,
                scroll_filter=filter,
                limit=limit,
                offset=offset,
                with_payload=with_payload,
                with_vectors=with_vectors,
                consistency=READ_CONSISTENCY,
            )
        )

    @guarded(is_transient)
    def scroll_page(
        self,
        filter: models.Filter,
        offset: str | None,
        limit: int,
        payload_keys: Sequence[str] | None = None,
    ) -> tuple[list[Hit], str | None]:
        points, next_offset = self._scroll(offset, limit, filter, _payload_selector(payload_keys))
        return [_hit(p) for p in points], None if next_offset is None else str(next_offset)

    @guarded(is_transient)
    def scroll_points(
        self, offset: str | None, limit: int
    ) -> tuple[list[models.PointStruct], str | None]:
        records, next_offset = self._scroll(offset, limit, with_vectors=True)
        points = [
            models.PointStruct(id=str(r.id), vector=cast(Any, r.vector or {}), payload=r.payload)
            for r in records
        ]
        return points, None if next_offset is None else str(next_offset)

    @guarded(is_transient)
    def update_vectors(
        self, points: Sequence[models.PointVectors], condition: models.Filter | None = None
    ) -> None:
        ids = [str(p.id) for p in points]
        existing = {str(h.id) for h in self.retrieve(ids, payload_keys=())}
        kept = [p for p in points if str(p.id) in existing]
        if kept:
            self._call(
                lambda: self._client.update_vectors(
                    self._collection,
                    kept,
                    update_filter=condition,
                    wait=True,
                    ordering=WRITE_ORDERING,
                )
            )

    @guarded(is_transient)
    def count(self, filter: models.Filter | None = None) -> int:
        return self._call(
            lambda: self._client.count(self._collection, count_filter=filter, exact=True)
        ).count

    @guarded(is_transient)
    def facet(self, key: str, filter: models.Filter, limit: int) -> dict[str, int]:
        response = self._call(
            lambda: self._client.facet(
                self._collection,
                key,
                facet_filter=filter,
                limit=limit,
                exact=True,
                consistency=READ_CONSISTENCY,
            )
        )
        return {str(hit.value): hit.count for hit in response.hits}

    def vector_index(self) -> VectorIndex | None:
        return None  # the server indexes in the background by itself

    # --- copies (app.backup): Qdrant's snapshot API, one node --------------------------------

    def copy_to(self, target: Path, counted: Mapping[str, models.Filter | None]) -> Copied:
        """Qdrant's snapshot with the counts of its moment: taken again while the collection
        changes under it (counts equal before and after)."""
        snapshot = target / SNAPSHOT_FILE
        for _ in range(SNAPSHOT_ATTEMPTS):
            before = self._counts(counted)
            self._download_snapshot(snapshot)
            if self._counts(counted) == before:
                return Copied(before, None)
            snapshot.unlink()
        raise CopyFailed(
            f"the collection changed during each of {SNAPSHOT_ATTEMPTS} snapshots: pause the"
            " writers (the Astrolabe app's sync) and run the backup again"
        )

    def _counts(self, counted: Mapping[str, models.Filter | None]) -> dict[str, int]:
        return {name: self.count(selector) for name, selector in counted.items()}

    def _download_snapshot(self, target: Path) -> None:
        """A snapshot of the collection, made by the server and saved to `target`, then
        deleted on the server."""
        if self._url == ":memory:":
            raise CopyFailed(
                "server mode backs up through Qdrant's snapshot API, which needs a Qdrant"
                " server (qdrant-client's local mode has none)"
            )
        made = self._call(lambda: self._client.create_snapshot(self._collection, wait=True))
        if made is None:
            raise EngineFailed("Qdrant made no snapshot")
        try:
            path = f"/collections/{self._collection}/snapshots/{made.name}"
            with self._rest() as rest, rest.stream("GET", path) as answer:
                answer.raise_for_status()
                with target.open("wb") as out:
                    for block in answer.iter_bytes(1 << 20):
                        out.write(block)
        finally:
            self._call(lambda: self._client.delete_snapshot(self._collection, made.name))

    def restore_snapshot(self, source: Path) -> None:
        """Replace the collection's data on the server with that of a snapshot `copy_to` made
        (the file in `source`)."""
        if self._url == ":memory:":
            raise CopyFailed("restoring a snapshot needs a Qdrant server")
        snapshot = source / SNAPSHOT_FILE
        path = f"/collections/{self._collection}/snapshots/upload"
        with snapshot.open("rb") as data, self._rest() as rest:
            answer = rest.post(
                path,
                params={"priority": "snapshot", "wait": "true"},
                files={"snapshot": (snapshot.name, data, "application/octet-stream")},
            )
        answer.raise_for_status()

    def scratch_dir(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="astrolabe-backup-"))

    def written_with(self) -> IndexSettings | None:
        return None  # a collection records no settings

    def record_written_with(self, settings: IndexSettings) -> None:
        pass

    def _rest(self) -> httpx.Client:
        headers = {"api-key": self._api_key} if self._api_key else {}
        return httpx.Client(base_url=self._url, headers=headers, timeout=max(self._timeout, 600))

    def close(self) -> None:
        self._client.close()
