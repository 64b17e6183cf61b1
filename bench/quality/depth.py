"""Candidate depth vs quality, page stability and engine time, on the 11k tier (Vaswani), in
process through `SearchService` with the depth constant patched (the HTTP numbers in
bench.run use the shipped constant).

For each depth: nDCG@10 of the first page (limit 10, chunk granularity, what a user asks),
recall@100 (limit 100), how many of 5 consecutive pages disagree with one 50-result request
(a result repeated or skipped when paging), and the median search time without the embedding.

    .venv/bin/python -m bench.quality.depth [--depths 10,20,30,50,100]"""

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from app.auth import Principal
from app.embeddings.sparse import Bm25Encoder
from app.search import service as search_service
from app.search.algorithms import Algorithm, FusionMethod, QueryEncoder
from app.search.service import Granularity, SearchQuery, SearchService
from app.store.edge import EdgeStore
from bench.harness.corpus import QUALITY_GROUP, judged, load_vaswani
from bench.harness.figures import ndcg_at_10
from bench.harness.prepare import COLLECTION, model_encoder, tier_dir
from bench.harness.results import DATA, RESULTS, write_results

ALGORITHMS = {
    "bm25": (Algorithm.BM25, FusionMethod.RRF),
    "semantic": (Algorithm.SEMANTIC, FusionMethod.RRF),
    "hybrid rrf": (Algorithm.HYBRID, FusionMethod.RRF),
    "hybrid dbsf": (Algorithm.HYBRID, FusionMethod.DBSF),
}
READER = Principal("quality", (QUALITY_GROUP,))
DOCUMENT = Granularity.DOCUMENT


def doc_ids(service: SearchService, query: SearchQuery) -> list[str]:
    return [str(h.payload["doc_id"]) for h in service.search(READER, query).hits]


def sweep(
    service: SearchService, queries: dict[str, str], qrels: dict[str, set[str]], depth: int
) -> dict[str, Any]:
    search_service.BASE_DEPTH = depth
    rows: dict[str, Any] = {}
    for name, (algorithm, fusion) in ALGORITHMS.items():
        ndcg, recall, drift, times = [], [], 0, []
        for qid, text in queries.items():
            base = SearchQuery(text=text, algorithm=algorithm, fusion=fusion)
            outcome = service.search(READER, base)
            times.append(outcome.timing_ms["search"])
            first = [str(h.payload["doc_id"]) for h in outcome.hits]
            ndcg.append(ndcg_at_10(first, qrels[qid]))
            per_doc = SearchQuery(
                text=text, algorithm=algorithm, fusion=fusion, limit=100, granularity=DOCUMENT
            )
            top100 = doc_ids(service, per_doc)
            recall.append(len(set(top100) & qrels[qid]) / len(qrels[qid]))
            paged = [
                h.id
                for page in range(5)
                for h in service.search(
                    READER,
                    SearchQuery(text=text, algorithm=algorithm, fusion=fusion, offset=10 * page),
                ).hits
            ]
            whole_query = SearchQuery(text=text, algorithm=algorithm, fusion=fusion, limit=50)
            whole = [h.id for h in service.search(READER, whole_query).hits]
            drift += paged != whole
        rows[name] = {
            "ndcg@10": round(statistics.mean(ndcg), 4),
            "recall@100": round(statistics.mean(recall), 4),
            "queries_paging_differently": drift,
            "search_ms_p50": round(statistics.median(times), 2),
        }
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--depths", default="10,20,30,50,100")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    _, queries, qrels = load_vaswani()
    asked = judged(queries, qrels)
    store = EdgeStore(tier_dir(args.data, "11k") / "data", COLLECTION, facet_index=False)
    encoder = model_encoder(args.data / "cache", hashing=False)
    service = SearchService(store, QueryEncoder(encoder, Bm25Encoder()), rrf_k=60)
    shipped = search_service.BASE_DEPTH
    try:
        result = {
            "shipped_depth": shipped,
            "depths": {d: sweep(service, asked, qrels, int(d)) for d in args.depths.split(",")},
        }
    finally:
        search_service.BASE_DEPTH = shipped
        encoder.save()
        store.close()
    write_results(args.out / "depth.json", result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
