"""Side-by-side: every engine in a fresh process on the tier's points, the hybrid scenarios'
filters, the same query vectors; ratios against ours from the same run."""

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

PEERS = ("lancedb", "pgvector", "qdrant-local")
LOCAL_MODE_MAX_POINTS = 12_000  # qdrant-client local mode is pure Python: ~1 s a query at 10k


def run_engine(
    root: Path, tier: str, engine: str, queries: int, live: bool = False
) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.peers.measure", "--engine", engine, "--tier", tier]
    command += ["--data", str(root), "--queries", str(queries)] + (["--live"] if live else [])
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"engine": engine, "error": done.stderr[-1500:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def compare(root: Path, tier: str, names: list[str], ours_http: dict[str, Any]) -> dict[str, Any]:
    """Engine-side p50 per scenario for ours and each peer, and each peer's ratio to ours:
    engine side (engine / engine) and end to end (our HTTP p50 with our engine time swapped
    for the peer's: the same service, embedding and HTTP, on that engine)."""
    points = int(ours_http["prepared"]["points"])
    queries = 93
    engines = {"ours": run_engine(root, tier, "ours", queries)}
    for name in names:
        if name == "qdrant-local" and points > LOCAL_MODE_MAX_POINTS:
            continue
        engines[name] = run_engine(root, tier, name, 10 if name == "qdrant-local" else queries)
    ratios(engines, _median_latency(ours_http))
    return engines


def compare_live(root: Path, tier: str, names: list[str], live: dict[str, Any]) -> dict[str, Any]:
    """The peers fed batch by batch (bench.peers.engines' live classes) with the tier's points
    and the trickle's, against ours as the live benchmark left its data directory; end to end
    against our HTTP p50 after the restart (the local model, the same data directory)."""
    queries = int(live["queries"])
    engines = {"ours": run_engine(root, tier, "ours", queries, live=True)}
    for name in names:
        if name != "qdrant-local":  # not a live store: pure Python, 11k at most
            engines[name] = run_engine(root, tier, name, queries, live=True)
    http = {name: {"p50": row["p50"]} for name, row in live["restart"]["latency"].items()}
    ratios(engines, http)
    return engines


def ratios(engines: dict[str, Any], http: dict[str, dict[str, float]]) -> None:
    """Each peer scenario's engine-side and end-to-end ratio to ours."""
    ours = engines["ours"].get("scenarios", {})
    for name, result in engines.items():
        if name == "ours" or "scenarios" not in result:
            continue
        for scenario, row in result["scenarios"].items():
            if scenario not in ours or scenario not in http:
                continue
            row["engine_ratio"] = round(row["p50"] / ours[scenario]["p50"], 2)
            swapped = http[scenario]["p50"] - ours[scenario]["p50"] + row["p50"]
            row["end_to_end_ratio"] = round(swapped / http[scenario]["p50"], 2)


def _median_latency(result: dict[str, Any]) -> dict[str, dict[str, float]]:
    runs = result["runs"]
    names = runs[0]["latency"].keys()
    return {
        name: {
            key: statistics.median(run["latency"][name][key] for run in runs) for key in ("p50",)
        }
        for name in names
    }
