"""How the strong-match floor was chosen (app.search.algorithms.STRONG_COSINE): the best cosine
of nonsense queries against that of real ones, on Vaswani (the real model in this process, the
abstracts on the float graph and the queries on the int8 one, as the service embeds them) and on
the demo corpus (through the service's semantic search), with the recall and the size of the
strong set at each candidate floor.

    .venv/bin/python -m bench.quality.strong_matches [--floors 0.3,0.35,0.4]

Results: bench/results/strong_matches.json."""

import argparse
import json
import random
import string
import tempfile
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from app.embeddings.dense import MiniLMEncoder
from bench.harness import results
from bench.harness.corpus import load_vaswani
from bench.harness.demo_server import PAGE_QUERIES, running_demo

RESULTS = results.RESULTS / "strong_matches.json"
FIXED_NONSENSE = [
    "zzqxqv nonexistentword",
    "qwxz plorf",
    "xyzzy frobnicate",
    "blorptastic wibble",
    "asdf qwer zxcv",
    "lorem ipsum dolor",
]
DEMO_EXTRA = ["budget", "kubernetes", "invoice", "meeting notes", "vacation", "hiring"]


def nonsense(count: int, seed: int = 7) -> list[str]:
    """The fixed strings, then random letter words (1 to 3 of 4 to 10 letters)."""
    rng = random.Random(seed)
    made = [
        " ".join(
            "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 10)))
            for _ in range(rng.randint(1, 3))
        )
        for _ in range(count - len(FIXED_NONSENSE))
    ]
    return FIXED_NONSENSE + made


def vaswani(floors: list[float], junk: list[str]) -> dict[str, Any]:
    docs, queries, qrels = load_vaswani()
    encoder = MiniLMEncoder(batch_size=32)
    ids = list(docs)
    at = {doc_id: i for i, doc_id in enumerate(ids)}
    corpus = np.array(encoder.encode([docs[i] for i in ids]), dtype=np.float32)
    judged = [q for q in queries if q in qrels]
    asked = encoder.queries.encode([queries[q] for q in judged])
    cosines = np.array(asked, dtype=np.float32) @ corpus.T
    junk_best = (np.array(encoder.queries.encode(junk), dtype=np.float32) @ corpus.T).max(axis=1)
    relevant = np.zeros_like(cosines, dtype=bool)
    for row, qid in enumerate(judged):
        relevant[row, [at[d] for d in qrels[qid] if d in at]] = True
    rows = []
    for floor in floors:
        strong = cosines >= floor
        rows.append(
            {
                "floor": floor,
                "recall_of_judged_relevant": round(
                    float((strong & relevant).sum() / relevant.sum()), 3
                ),
                "queries_without_strong": int((strong.sum(axis=1) == 0).sum()),
                "median_strong_per_query": float(np.median(strong.sum(axis=1))),
                "nonsense_with_strong": int((junk_best >= floor).sum()),
            }
        )
    return {
        "queries": len(judged),
        "nonsense": len(junk),
        "real_best_cosine_p10_p50": np.percentile(cosines.max(axis=1), [10, 50]).round(3).tolist(),
        "nonsense_best_cosine_p50_p90_max": np.percentile(junk_best, [50, 90, 100])
        .round(3)
        .tolist(),
        "floors": rows,
    }


def demo(floors: list[float], junk: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, running_demo(Path(tmp) / "data") as server:
        headers = {"Authorization": f"Bearer {server.token}"}
        with httpx.Client(base_url=server.base, headers=headers, timeout=60) as client:

            def best_cosines(query: str) -> list[float]:
                body = {
                    "query": query,
                    "algorithm": "semantic",
                    "limit": 100,
                    "granularity": "document",
                }
                found = client.post("/api/v1/search", json=body).json()
                return [r["relevance"] for r in found["results"]]

            real = {q: best_cosines(q) for q in PAGE_QUERIES + DEMO_EXTRA}
            made_up = {q: best_cosines(q)[0] for q in junk}
    return {
        "real_best_cosine": {q: c[0] for q, c in real.items()},
        "nonsense_best_cosine_max": max(made_up.values()),
        "floors": [
            {
                "floor": floor,
                "real_queries_without_strong": sorted(q for q, c in real.items() if c[0] < floor),
                "strong_documents_per_query": {
                    q: sum(x >= floor for x in c) for q, c in real.items()
                },
                "nonsense_with_strong": sum(best >= floor for best in made_up.values()),
            }
            for floor in floors
        ],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--floors", default="0.3,0.35,0.4,0.45")
    args = parser.parse_args(argv)
    floors = [float(f) for f in args.floors.split(",")]
    junk = nonsense(50)
    report = {
        "load_average": results.load_average_text(),
        "vaswani": vaswani(floors, junk),
        "demo": demo(floors, junk[:20]),
    }
    results.write_results(RESULTS, report, end="\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
