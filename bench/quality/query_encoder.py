"""The int8 query graph against the float one, on the 11k tier (Vaswani, documents embedded by
the float graph), in process through `SearchService`: nDCG@10 of semantic and of the default
hybrid search (chunk granularity, limit 10), how closely the query vectors agree, and the
per-query encode time (medians, the two graphs interleaved on the same texts).

    .venv/bin/python -m bench.quality.query_encoder [--data DIR] [--rounds 5]

The tier's index is searched in a copy (the engine locks its directory). Results:
bench/results/query_encoder.json."""

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from app.auth import Principal
from app.embeddings.dense import DenseEncoder, MiniLMEncoder, OnnxGraph
from app.embeddings.sparse import Bm25Encoder
from app.search.algorithms import Algorithm, QueryEncoder
from app.search.service import SearchQuery, SearchService
from app.store.edge import EdgeStore
from bench.harness.corpus import QUALITY_GROUP, judged, load_vaswani
from bench.harness.figures import ndcg_at_10
from bench.harness.prepare import COLLECTION, tier_dir
from bench.harness.results import DATA, RESULTS, load_average_text, write_results

READER = Principal("quality", (QUALITY_GROUP,))


def ndcg(
    store: EdgeStore, dense: DenseEncoder, queries: dict[str, str], qrels: dict[str, set[str]]
) -> dict[str, float]:
    service = SearchService(store, QueryEncoder(dense, Bm25Encoder()), rrf_k=60)
    scores: dict[str, float] = {}
    for name, algorithm in (("semantic", Algorithm.SEMANTIC), ("hybrid", Algorithm.HYBRID)):
        per_query = []
        for qid, text in queries.items():
            hits = service.search(READER, SearchQuery(text=text, algorithm=algorithm)).hits
            per_query.append(ndcg_at_10([str(h.payload["doc_id"]) for h in hits], qrels[qid]))
        scores[name] = round(statistics.mean(per_query), 4)
    return scores


def encode_ms(graphs: dict[str, OnnxGraph], texts: list[str], rounds: int) -> dict[str, float]:
    """Each text alone on each graph in turn (as a search embeds it), `rounds` times."""
    times: dict[str, list[float]] = {name: [] for name in graphs}
    for _ in range(rounds):
        for text in texts:
            for name, graph in graphs.items():
                start = time.perf_counter()
                graph.run([text])
                times[name].append((time.perf_counter() - start) * 1000)
    return {name: round(statistics.median(ms), 2) for name, ms in times.items()}


def agreement(model: MiniLMEncoder, texts: list[str]) -> dict[str, float]:
    floats = np.array(model.encode(texts))
    int8 = np.array(model.queries.encode(texts))
    cosines = (floats * int8).sum(axis=1)
    return {
        "min": round(float(cosines.min()), 4),
        "p10": round(float(np.percentile(cosines, 10)), 4),
        "median": round(float(np.median(cosines)), 4),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    _, queries, qrels = load_vaswani()
    asked = judged(queries, qrels)
    model = MiniLMEncoder()
    if model.queries.graph is model.graph:
        raise SystemExit("no int8 query graph: run `astrolabe-search export-model` first")
    load_before = load_average_text()
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "data"
        shutil.copytree(tier_dir(args.data, "11k") / "data", copy)
        store = EdgeStore(copy, COLLECTION, facet_index=False)
        try:
            quality = {
                "float": ndcg(store, model, asked, qrels),
                "int8": ndcg(store, model.queries, asked, qrels),
            }
        finally:
            store.close()
    texts = list(asked.values())
    report: dict[str, Any] = {
        "queries": len(asked),
        "ndcg@10": quality,
        "query_cosine_int8_vs_float": agreement(model, texts),
        "encode_ms_p50": encode_ms(
            {"float": model.graph, "int8": model.queries.graph}, texts, args.rounds
        ),
        "load_average": f"{load_before} (start), {load_average_text()} (end)",
    }
    write_results(RESULTS / "query_encoder.json", report)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
