"""The first seconds after a start, with the page cache as a stop, memory pressure or a reboot
leaves it (issue 35, item 3).

    python -m bench.index.start_cache --data bench/.data/tiers/1m/data --cache cold \
        --app-dir CHECKOUT_A --app-dir CHECKOUT_B --runs 5 --out FILE

Before each start the data directory's files are put out of the page cache (`posix_fadvise`
DONTNEED, which the kernel honours for clean pages): all of them (`cold`, as after a reboot),
15 % of them at random in 256 KiB pieces (`part`, as memory pressure leaves them), or none
(`warm`, as a stop leaves them). Then `serve` starts from each checkout in turn, and one client
sends the judged queries back to back for `--seconds` after `/readyz`. Per start: the share of the
directory in the page cache before it, `/readyz`, the searches' p50 / p99 / slowest, the
slowest of the first second, and the engine process's reads (all, and from the disk). With
`--crash` each start finds no facet snapshot, as after a crash: the documents are then read back
while the searches run."""

import argparse
import json
import os
import random
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from app.store.read_back import resident
from bench.harness import service
from bench.harness.corpus import judged_queries
from bench.harness.results import load_average, machine, write_results

PIECE = 256 << 10
SNAPSHOTS = "*.facets.npz"  # app.store.layout.IndexLayout.facet_snapshot
PART = 0.15
CACHES = ("cold", "part", "warm")


def _files(data: Path) -> list[Path]:
    return [Path(top, name) for top, _, names in os.walk(data) for name in names]


def evict(data: Path, cache: str, rng: random.Random) -> None:
    """The files of `data` out of the page cache, all of them or (`part`) a random share."""
    if cache == "warm":
        return
    for path in _files(data):
        fd = os.open(path, os.O_RDONLY)
        try:
            if cache == "cold":
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                continue
            for offset in range(0, os.fstat(fd).st_size, PIECE):
                if rng.random() < PART:
                    os.posix_fadvise(fd, offset, PIECE, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def in_cache(data: Path) -> float:
    """The share of the pages of `data` in the page cache."""
    held = pages = 0
    for path in _files(data):
        fd = os.open(path, os.O_RDONLY)
        try:
            mask = resident(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)
        held, pages = held + int(mask.sum()), pages + mask.size
    return held / max(pages, 1)


def reads_mib(pid: int) -> dict[str, int]:
    """What a process read: everything (`rchar`) and from the disk (`read_bytes`), in MiB."""
    fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return {"all": int(fields["rchar"]) >> 20, "disk": int(fields["read_bytes"]) >> 20}


def one_start(data: Path, app_dir: Path, seconds: float) -> dict[str, Any]:
    queries = judged_queries()
    with service.running_service(data, wait_idle=False, app_dir=app_dir) as running:
        ready = time.perf_counter()
        timed: list[tuple[float, float]] = []
        headers = {"Authorization": f"Bearer {service.BENCH_KEY}"}
        with httpx.Client(headers=headers, timeout=60) as client:
            while time.perf_counter() - ready < seconds:
                began = time.perf_counter()
                query = queries[len(timed) % len(queries)]
                client.post(f"{running.base}/api/v1/search", json={"query": query})
                timed.append((began - ready, (time.perf_counter() - began) * 1000))
        roles = service.process_roles(running.process.pid)
        engine = next(pid for pid, role in roles.items() if role == "engine")
        reads = reads_mib(engine)
        ready_s = running.cold_start_s
    ms = sorted(wall for _, wall in timed)
    return {
        "ready_s": round(ready_s, 2),
        "searches": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p99_ms": round(ms[int(len(ms) * 0.99)], 1),
        "slowest_ms": round(ms[-1], 1),
        "first_second_slowest_ms": round(max(wall for at, wall in timed if at < 1), 1),
        "engine_reads_mib": reads,
    }


@contextmanager
def without_snapshots(data: Path, crash: bool) -> Iterator[None]:
    """(`crash`) The facet snapshots kept aside during a start, as a crash leaves none (the
    documents are then read back while searches run), and put back after it."""
    kept = [(path, path.with_name(path.name + ".kept")) for path in data.rglob(SNAPSHOTS)]
    if crash:
        for path, aside in kept:
            path.rename(aside)
    try:
        yield
    finally:
        if crash:
            for path, aside in kept:
                aside.replace(path)


def measure(
    data: Path, cache: str, app_dirs: list[Path], runs: int, seconds: float, crash: bool
) -> dict[str, Any]:
    rng = random.Random(7)
    starts: dict[str, list[dict[str, Any]]] = {str(app): [] for app in app_dirs}
    for run in range(runs):
        for app in app_dirs:
            evict(data, cache, rng)
            with without_snapshots(data, crash):
                row = {"in_cache": round(in_cache(data), 3), **one_start(data, app, seconds)}
            row["load_average"] = load_average()
            starts[str(app)].append(row)
            print(run, app.name, json.dumps(row), flush=True)
    keys = ("ready_s", "p50_ms", "p99_ms", "first_second_slowest_ms", "searches")
    medians = {
        app: {key: statistics.median(row[key] for row in rows) for key in keys}
        for app, rows in starts.items()
    }
    measured = {"cache": cache, "crash": crash, "seconds": seconds, "starts": starts}
    return measured | {"medians": medians}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.index.start_cache")
    parser.add_argument("--data", type=Path, required=True, help="a tier's data directory")
    parser.add_argument("--cache", choices=CACHES, required=True)
    parser.add_argument("--app-dir", type=Path, action="append", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=6.0, help="searched after /readyz")
    parser.add_argument("--out", type=Path, required=True, help="the results file (JSON)")
    parser.add_argument(
        "--crash", action="store_true", help="start without the facet snapshot, as after a crash"
    )
    args = parser.parse_args()
    measured = measure(args.data, args.cache, args.app_dir, args.runs, args.seconds, args.crash)
    write_results(args.out, {"machine": machine(), **measured})
    print(json.dumps(measured["medians"]))


if __name__ == "__main__":
    main()
