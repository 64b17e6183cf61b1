"""What each lever of the search costs, in one process, interleaved query by query so that the
machine's noise falls on every variant alike: the default path as it was before issue 17 (RRF
fused inside the engine, BM25 query terms weighted 1) against today's default path, and today's
options (DBSF, convex, feedback, a reranker on loopback that answers at once).

    .venv/bin/python -m bench.quality.levers_ab [--data DIR] [--rounds 5]

Runs on a copy of the 11k tier's data directory (bench.quality.retrieval or bench.run prepare
it)."""

import argparse
import json
import shutil
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import qdrant_edge as qe
from qdrant_client.http import models

from app.auth import Principal
from app.embeddings.dense import MiniLMEncoder
from app.embeddings.sparse import Bm25Encoder
from app.search.algorithms import Encoded, Hybrid, QueryEncoder, SearchAlgorithm, Wanted
from app.search.fusion import FusionMethod
from app.search.rerank import Reranker
from app.search.service import SearchQuery, SearchService
from app.store.base import Hit, Query
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR, SPARSE_VECTOR
from bench.harness.corpus import QUALITY_GROUP, judged_queries
from bench.harness.figures import percentiles
from bench.harness.loopback import JsonHandler, loopback_server
from bench.harness.prepare import COLLECTION, tier_dir
from bench.harness.results import DATA, RESULTS, load_average, write_results
from bench.quality.report import render_levers

READER = Principal("quality", (QUALITY_GROUP,), frozenset({"search"}))


class EngineFusedHybrid(Hybrid):
    """Before issue 17: one engine query, both branches fused there by RRF."""

    def _candidates(self, query: Encoded, wanted: Wanted) -> list[Hit]:
        where, depth = wanted.where, wanted.depth
        branches = [
            models.Prefetch(
                query=models.NearestQuery(nearest=query.dense or []),
                using=DENSE_VECTOR,
                filter=where,
                limit=depth,
            )
        ]
        if query.has_terms and query.sparse is not None:
            branches.append(
                models.Prefetch(
                    query=models.NearestQuery(nearest=query.sparse),
                    using=SPARSE_VECTOR,
                    filter=where,
                    limit=depth,
                )
            )
        return self.store.query(
            Query(
                query=models.RrfQuery(rrf=models.Rrf(k=self.fusion.rrf_k)),
                prefetch=branches,
                filter=where,
                limit=depth,
                score_threshold=wanted.score_threshold,
                payload_keys=wanted.payload_keys,
            )
        )


class UnitWeightEncoder(Bm25Encoder):
    """Before issue 17: every query term weighs 1."""

    _bm25_query = qe.Bm25(qe.Bm25Config(language="english"))

    def encode_query(self, text: str) -> models.SparseVector:
        vector = self._bm25_query.embed_query(text)
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))


class Before(SearchService):
    def algorithm_for(self, query: SearchQuery) -> SearchAlgorithm:
        return EngineFusedHybrid(self.store, FusionMethod.RRF, self.rrf_k)


class InstantReranker(JsonHandler):
    """Answers the /rerank protocol at once, in the order sent."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        count = len(body["documents"])
        results = [{"index": i, "relevance_score": 1 - i / count} for i in range(count)]
        self.send_json(200, json.dumps({"results": results}).encode())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.quality.levers_ab")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    texts = judged_queries()
    scratch = Path(tempfile.mkdtemp(prefix="levers-"))
    shutil.copytree(tier_dir(args.data, "11k") / "data", scratch / "data")
    store = EdgeStore(scratch / "data", COLLECTION)
    store.wait_for_facet_index()
    dense = MiniLMEncoder()
    try:
        with loopback_server(InstantReranker) as url:
            reranker = Reranker(url, None, None, timeout=2.0)
            now = SearchService(store, QueryEncoder(dense, Bm25Encoder()), 60, reranker=reranker)
            before = Before(store, QueryEncoder(dense, UnitWeightEncoder()), 60)
            base = SearchQuery(limit=10)
            variants: dict[str, tuple[SearchService, SearchQuery]] = {
                "before (engine RRF, unit query weights)": (before, base),
                "now: hybrid rrf (default)": (now, base),
                "now: hybrid dbsf": (now, replace(base, fusion=FusionMethod.DBSF)),
                "now: hybrid convex": (now, replace(base, fusion=FusionMethod.CONVEX)),
                "now: hybrid rrf + feedback": (now, replace(base, feedback=True)),
                "now: hybrid rrf + rerank (instant loopback)": (now, replace(base, rerank=True)),
            }
            walls: dict[str, list[float]] = {name: [] for name in variants}
            load_before = load_average()
            for text in texts[:10]:  # warm-up
                for service, query in variants.values():
                    service.search(READER, replace(query, text=text))
            for _ in range(args.rounds):
                for text in texts:
                    for name, (service, query) in variants.items():
                        started = time.perf_counter()
                        service.search(READER, replace(query, text=text))
                        walls[name].append((time.perf_counter() - started) * 1000)
            reranker.close()
    finally:
        store.close()
        shutil.rmtree(scratch, ignore_errors=True)
    report(walls, load_before, load_average())


def report(walls: dict[str, list[float]], before: list[float], after: list[float]) -> None:
    baseline = statistics.median(next(iter(walls.values())))
    rows = {}
    for name, w in walls.items():
        spread = percentiles(w)
        rows[name] = {
            "p50_ms": spread["p50"],
            "p95_ms": spread["p95"],
            "vs_before": round(statistics.median(w) / baseline, 3),
            "delta_p50_ms": round(statistics.median(w) - baseline, 2),
        }
    load = {"before": before, "after": after}
    result = {"rows": rows, "load_average": load}
    write_results(RESULTS / "levers.json", result)
    print(json.dumps(rows, indent=1), json.dumps(load))
    render_levers(result)


if __name__ == "__main__":
    main()
