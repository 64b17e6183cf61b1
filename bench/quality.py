"""Ranking quality on the Vaswani/NPL test collection (11,429 abstracts, 93 queries, human
judgements): nDCG@10 and recall@100 per algorithm, through the service's own indexer and search
service on the embedded engine, with the real model. The index is built once and kept.

    .venv/bin/python -m bench.quality [--data-dir bench/.data/vaswani] [--dataset DIR]
"""

import argparse
import math
import re
import statistics
import time
from pathlib import Path

from app.auth import Principal
from app.embeddings.dense import MiniLMEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.search.algorithms import Algorithm, FusionMethod, QueryEncoder
from app.search.service import SearchQuery, SearchService
from app.store.edge import EdgeStore

DATASET = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "vaswani_npl"
_DOC = re.compile(r"<DOCNO>(.*?)</DOCNO>(.*?)</DOC>", re.S)
_QUERY = re.compile(r"<num>(.*?)</num><title>(.*?)</title>", re.S)
READER = Principal("bench")


def load(dataset: Path) -> tuple[dict[str, str], dict[str, str], dict[str, set[str]]]:
    docs = {
        m[0].strip(): " ".join(m[1].split())
        for m in _DOC.findall((dataset / "doc-text.trec").read_text())
    }
    queries = {
        m[0].strip(): " ".join(m[1].split()).lower()
        for m in _QUERY.findall((dataset / "query-text.trec").read_text())
    }
    qrels: dict[str, set[str]] = {}
    for line in (dataset / "qrels").read_text().splitlines():
        qid, _, doc_id, rel = line.split()
        if int(rel) > 0:
            qrels.setdefault(qid, set()).add(doc_id)
    return docs, queries, qrels


def build_index(indexer: Indexer, docs: dict[str, str]) -> None:
    started = time.perf_counter()
    items = list(docs.items())
    chunks = 0
    for start in range(0, len(items), 64):
        batch = [
            {
                "doc_type": "paper",
                "doc_id": doc_id,
                "content": text,
                "owner": "bench",
                "modified_at": 0,
            }
            for doc_id, text in items[start : start + 64]
        ]
        chunks += sum(indexer.index(indexer.accept(validate_batch(batch))).values())
    seconds = time.perf_counter() - started
    print(
        f"indexed {len(items)} documents, {chunks} chunks in {seconds:.0f} s"
        f" ({chunks / seconds:.1f} chunks/s)"
    )


def ndcg_at_10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return dcg / ideal if ideal else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default="bench/.data/vaswani")
    parser.add_argument("--dataset", default=str(DATASET))
    args = parser.parse_args()
    docs, queries, qrels = load(Path(args.dataset))
    store = EdgeStore(Path(args.data_dir), "vaswani")
    dense, sparse = MiniLMEncoder(), Bm25Encoder()
    indexer = Indexer(store, dense, sparse)
    if store.count() < len(docs):
        build_index(indexer, docs)
    service = SearchService(store, QueryEncoder(dense, sparse), rrf_k=60)
    variants = [
        ("bm25", Algorithm.BM25, FusionMethod.RRF),
        ("semantic", Algorithm.SEMANTIC, FusionMethod.RRF),
        ("hybrid rrf k=60", Algorithm.HYBRID, FusionMethod.RRF),
        ("hybrid dbsf", Algorithm.HYBRID, FusionMethod.DBSF),
    ]
    print("| algorithm | nDCG@10 | recall@100 | median ms |")
    print("|---|---|---|---|")
    for name, algorithm, fusion in variants:
        scores, recalls, times = [], [], []
        for qid, text in queries.items():
            if qid not in qrels:
                continue
            started = time.perf_counter()
            query = SearchQuery(text=text, algorithm=algorithm, fusion=fusion, limit=100)
            hits = service.search(READER, query).hits
            times.append((time.perf_counter() - started) * 1000)
            ranked = [str(h.payload["doc_id"]) for h in hits]
            scores.append(ndcg_at_10(ranked, qrels[qid]))
            recalls.append(len(set(ranked) & qrels[qid]) / len(qrels[qid]))
        print(
            f"| {name} | {statistics.mean(scores):.3f} | {statistics.mean(recalls):.3f}"
            f" | {statistics.median(times):.1f} |"
        )
    store.close()


if __name__ == "__main__":
    main()
