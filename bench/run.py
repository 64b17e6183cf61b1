"""The speed benchmark, one command:

    .venv/bin/python -m bench.run --tiers 11k,100k [--peers lancedb,pgvector,qdrant-local]

For each tier: prepare the data directory once (vectors cached under bench/.data/cache), start
the real service on a loopback port, measure cold start, latency per scenario, throughput at
concurrency 1/4/16, quality (11k tier), memory and disk; then the peers on the same points.
Results go to bench/results/<tier>.json; `python -m bench.report` renders docs/benchmarks.md.
`--smoke` runs a seconds-long version (300 documents, hashing vectors) for CI.

    .venv/bin/python -m bench.run --live --tiers 100k [--peers lancedb,pgvector]

The live index instead (bench/index/live.py): the tier sent over HTTP to a fresh service and
measured with no restart, a trickle of new documents, a restart; results in
bench/results/live-<tier>.json. With `--corpus users` (bench/index/users.py), the users'
corpus (100k short documents, a partial view, repeated queries) instead of the tier.
"""

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

from bench.harness import service
from bench.harness.corpus import DATASET, judged, judged_queries, load_vaswani
from bench.harness.figures import disk_mib
from bench.harness.prepare import TIERS, model_encoder, prepare, tier_dir
from bench.harness.results import DATA, RESULTS, machine, write_results


def measure_tier(root: Path, tier: str, args: argparse.Namespace, dataset: Path) -> dict[str, Any]:
    docs, queries, qrels = load_vaswani(dataset)
    encoder = model_encoder(root / "cache", hashing=args.smoke)
    prepared = prepare(root, TIERS[tier], docs, encoder)
    asked = dict(list(judged(queries, qrels).items())[: args.queries])
    query_texts = list(asked.values())
    encoder.encode_array(query_texts)  # the peers read the query vectors from the cache
    encoder.save()
    data_dir = tier_dir(root, tier) / "data"
    result: dict[str, Any] = {"tier": tier, "prepared": prepared.__dict__, "runs": []}
    for run in range(args.runs):
        with service.running_service(data_dir) as svc:
            measured: dict[str, Any] = {
                "cold_start_s": round(svc.cold_start_s, 2),
                "settled_s": round(svc.settled_s, 2),
            }
            measured["latency"] = service.latency(svc.base, query_texts, args.rounds)
            measured["throughput"] = service.throughput(
                svc.base, query_texts, args.clients, args.seconds
            )
            if tier in ("11k", "smoke") and run == 0:
                result["quality"] = service.quality(svc.base, asked, qrels)
            measured |= svc.memory_mib()
        result["runs"].append(measured)
        print(json.dumps({"tier": tier, "run": run, "cold_start_s": measured["cold_start_s"]}))
    result["disk_mib"] = disk_mib(data_dir)
    return result


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run")
    parser.add_argument(
        "--tiers", help=f"comma-separated: {', '.join(TIERS)} (11k,100k; live: 100k)"
    )
    parser.add_argument("--runs", type=int, default=3, help="service restarts per tier")
    parser.add_argument("--rounds", type=int, default=1, help="passes over the queries a run")
    parser.add_argument("--queries", type=int, default=93)
    parser.add_argument("--seconds", type=float, default=10.0, help="per concurrency level")
    parser.add_argument("--clients", default="1,4,16")
    parser.add_argument("--peers", default="", help="lancedb,pgvector,qdrant-local")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--ingest", action="store_true", help="also: ingest rate vs the model")
    parser.add_argument("--smoke", action="store_true", help="CI: tiny corpus, hashing vectors")
    parser.add_argument("--live", action="store_true", help="the live index (bench/index/live.py)")
    parser.add_argument("--trickle-seconds", type=float, default=60.0)
    parser.add_argument("--trickle-rate", type=float, default=50.0, help="documents/s")
    parser.add_argument("--first-seconds", type=float, default=20.0, help="after a restart")
    parser.add_argument(
        "--offline-twin", action="store_true", help="live: also against the same points optimized"
    )
    parser.add_argument(
        "--corpus", choices=("bench", "users"), default="bench", help="live: the users' corpus"
    )
    parser.add_argument("--profile", action="store_true", help="users: py-spy at 16 clients")
    parser.add_argument("--baseline", type=Path, help="users: an older checkout to compare")
    parser.add_argument("--reuse", action="store_true", help="users: the index loaded before")
    parser.add_argument("--app-dir", type=Path, help="users: the checkout that serves")
    parser.add_argument("--baseline-data", type=Path, help="users: the baseline's own index")
    parser.add_argument(
        "--side-by-side", type=int, default=0, help="users: ROUNDS of throughput, both served"
    )
    args = parser.parse_args(argv)
    args.clients = tuple(int(c) for c in str(args.clients).split(","))
    args.tiers = args.tiers or ("100k" if args.live else "11k,100k")
    if args.smoke:
        args.tiers, args.runs, args.queries, args.seconds = "smoke", 1, 5, 1.0
        args.trickle_seconds, args.first_seconds = 2.0, 2.0
    return args


def run_users(args: argparse.Namespace) -> None:
    from bench.index.users import measure_users

    result = measure_users(args.data, args) | {"machine": machine()}
    name = "live-users-smoke.json" if args.smoke else "live-users-100k.json"
    print(f"wrote {write_results(args.out / name, result)}")


def run_live(args: argparse.Namespace) -> None:
    from bench.index.live import headline, measure_live

    if args.corpus == "users":
        run_users(args)
        return

    docs, _, _ = load_vaswani(args.dataset)
    queries = judged_queries(args.dataset, args.queries)
    for tier in args.tiers.split(","):
        result = measure_live(args.data, tier, args, docs, queries)
        result["machine"] = machine()
        path = write_results(args.out / f"live-{tier}.json", result)
        print(json.dumps(headline(result)), flush=True)
        if args.peers:
            from bench.peers import compare_live

            result["peers"] = compare_live(args.data, tier, args.peers.split(","), result)
            write_results(path, result)
        print(f"wrote {path}")


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if args.live:
        run_live(args)
        return
    if args.ingest:
        from app.embeddings.dense import MiniLMEncoder
        from bench.harness.model import chunk_texts, chunks_per_second, long_documents
        from bench.index.embedding import ingest_chunks_per_second

        documents, encoder = long_documents(60), MiniLMEncoder()
        texts = chunk_texts(documents)
        raw = chunks_per_second(encoder, texts)
        ingested = ingest_chunks_per_second(encoder, documents)
        rate = {
            "chunks": len(texts),
            "model_chunks_per_s": round(raw, 1),
            "service_chunks_per_s": round(ingested, 1),
            "ratio": round(ingested / raw, 3),
        }
        write_results(args.out / "ingest.json", rate | {"machine": machine()}, indent=None)
        print(json.dumps(rate))
    for tier in args.tiers.split(","):
        result = measure_tier(args.data, tier, args, args.dataset)
        result["machine"] = machine()
        path = write_results(args.out / f"{tier}.json", result)
        if args.peers:
            from bench.peers import compare

            result["peers"] = compare(args.data, tier, args.peers.split(","), result)
            write_results(path, result)
        print(f"wrote {path}")


if __name__ == "__main__":
    # Stopped with SIGTERM, the run still stops the services and the stub it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
