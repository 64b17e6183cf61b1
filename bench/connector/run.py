"""The Nextcloud connector, measured as a deployment sees it:

    .venv/bin/python -m bench.connector [--files 10000] [--sizes 2000] [--profile]
    .venv/bin/python -m bench.connector --smoke      # seconds: 30 files, hashing vectors

A Nextcloud-dialect server (tests/nextcloud, in this process) holding `--files` files in folders
of ten for three users with shares (bench/connector/world.py), and the real `serve` on a
loopback port with SEARCH_NEXTCLOUD_URL pointing at it, the local model and the embedded engine.
The three users are connected over the API at once; then:

- the first index: files/s, the CPU of each of the service's processes (`serve`: HTTP, the
  connector, the model; `engine`; `extract`), the dialect's side of the requests, and with
  `--profile` (py-spy installed) where the connector's threads and the index queue spend it;
- peak memory of the service during the first index, at each size of `--sizes` too (a fresh
  dialect and service each), to show whether it grows with the number of files;
- ticks while nothing changes (SEARCH_NEXTCLOUD_INTERVAL, 5 s): requests each, and time;
- a file edited deep in the tree (depth 9): the next tick's requests, and the time until a
  search finds it (polling);
- a new file and an edit, each with its webhook POSTed at once: the time until searchable;
- hybrid search latency (10 a second, as u0) during the first index against idle.

Results: bench/results/connector.json (smoke: connector-smoke.json), each figure with the load
average beside it; rendered into docs/benchmarks.md, "The Nextcloud connector" (`--report`
renders them again without measuring)."""

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.connector import report
from bench.connector.measure import changes, first_index, idle_ticks, model_rate, running
from bench.connector.probes import Prober
from bench.harness.results import DATA, REPO, RESULTS, load_average, machine, write_results

TARGETS = {
    "idle_tick_requests": 1,
    "idle_tick_ms": 50,
    "deep_change_requests": "<= depth + 2 (depth 9: 11)",
    "webhook_searchable_s": 2,
    "poll_searchable_s": "<= interval + 5",
    "search_p99_ratio": 2,
}


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.connector")
    parser.add_argument("--files", type=int, default=10_000, help="the full measurement's tree")
    parser.add_argument("--sizes", default="2000", help="smaller trees: first index + memory")
    parser.add_argument("--interval", type=float, default=5.0, help="SEARCH_NEXTCLOUD_INTERVAL")
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=5, help="webhook changes of each kind")
    parser.add_argument("--poll-repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="py-spy the first index")
    parser.add_argument("--smoke", action="store_true", help="30 files, hashing vectors")
    parser.add_argument(
        "--report", action="store_true", help="only render the results into docs/benchmarks.md"
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in str(args.sizes).split(",") if s]
    if args.smoke:
        args.files, args.sizes, args.interval = 30, [], 1.0
        args.idle_seconds, args.repeats, args.poll_repeats = 4.0, 1, 1
    return args


def revision() -> str:
    """The commit measured, `+dirty` when app/ has changes not committed."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return done.stdout.strip()

    return git("rev-parse", "--short", "HEAD") + (
        "+dirty" if git("status", "--porcelain", "app") else ""
    )


def fresh(root: Path) -> Path:
    if root.exists():
        shutil.rmtree(root)
    return root / "data"


def headline(result: dict[str, Any]) -> dict[str, Any]:
    full = result["full"]
    return {
        "files": full["first_index"]["files"],
        "files_per_s": full["first_index"]["files_per_s"],
        "idle_tick_requests": full["idle_ticks"]["requests_per_tick"],
        "idle_tick_ms": full["idle_ticks"]["tick_ms_median"],
        "deep_edit_requests": full["deep_edit_poll"]["requests_median"],
        "webhook_new_s": full["new_file_webhook"]["searchable_s_median"],
        "poll_edit_s": full["deep_edit_poll"]["searchable_s_median"],
        "search_p99_ms": {k: v.get("p99") for k, v in full["search"].items()},
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    if args.report:
        measured: dict[str, Any] = json.loads((args.out / "connector.json").read_text())
        print(f"wrote {report.write(measured)}")
        return measured
    root = args.data / ("connector-smoke" if args.smoke else "connector")
    result: dict[str, Any] = {
        "command": " ".join(
            ["python -m bench.connector", *(argv if argv is not None else sys.argv[1:])]
        ),
        "revision": revision(),
        "settings": {
            "interval_s": args.interval,
            "shares_interval_s": 3600.0,
            "concurrency": 4,
            "extract_workers": 1,
            "embedding": "hashing (smoke)" if args.smoke else "local MiniLM (ONNX)",
        },
        "targets": TARGETS,
        "sizes": [],
        "load_average_start": load_average(),
    }
    for size in args.sizes:
        with running(fresh(root / str(size)), size, args.interval, args.smoke) as bench:
            measured = {
                "world": bench.world.summary(),
                "first_index": first_index(bench, None, None),
            }
        result["sizes"].append(measured)
        print(json.dumps({"files": size, "first_index_s": measured["first_index"]["seconds"]}))
    with running(fresh(root / str(args.files)), args.files, args.interval, args.smoke) as bench:
        profile = root / "profile.txt" if args.profile else None
        with Prober(bench.svc.base) as prober:
            full: dict[str, Any] = {"world": bench.world.summary()}
            full["first_index"] = first_index(bench, prober, profile)
            result["sizes"].append({k: full[k] for k in ("world", "first_index")})
            prober.phase = "idle"
            full["idle_ticks"] = idle_ticks(bench, args.idle_seconds)
            prober.phase = "changes"
            timeout = args.interval + 60
            full["deep_edit_poll"] = changes(bench, "poll", False, args.poll_repeats, timeout)
            full["new_file_webhook"] = changes(bench, "webhook", True, args.repeats, timeout)
            full["edit_webhook"] = changes(bench, "webhook", False, args.repeats, timeout)
        full["search"] = {p: prober.figures(p) for p in ("first index", "idle", "changes")}
        full["search"]["errors"] = {"count": prober.errors}
        result["full"] = full
    if not args.smoke:
        result["model_alone"] = model_rate(bench.world)
    result["machine"] = machine()
    name = "connector-smoke.json" if args.smoke else "connector.json"
    path = write_results(args.out / name, result)
    print(json.dumps(headline(result)))
    print(f"wrote {path}")
    if not args.smoke and args.out == RESULTS:
        print(f"wrote {report.write(result)}")
    return result
