"""The real service (`python -m app serve`) on a loopback port against a prepared data directory,
measured as a client sees it: cold start, latency per scenario, throughput under concurrency,
ranking quality, memory."""

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.harness.corpus import BENCH_GROUP, BENCH_USER, FIRST_DAY, QUALITY_GROUP, SPAN, YEAR
from bench.harness.figures import ndcg_at_10, percentiles
from bench.harness.loopback import free_port
from bench.harness.prepare import COLLECTION

BENCH_KEY = "bench-user-key"
QUALITY_KEY = "bench-quality-key"
# scope index: writes documents (bench.index.live), backups (bench.index.backup)
INDEX_KEY = "bench-index-key"


def scenarios() -> dict[str, dict[str, Any]]:
    """Request bodies (without `query`) for each row; selectivity follows bench.harness.corpus."""
    half = FIRST_DAY + SPAN // 2
    return {
        "hybrid, access rule only": {},
        "hybrid, ~50 % (date)": {"modified_after": half},
        "hybrid, ~5 % (category)": {"categories": ["cat03"]},
        "hybrid, one folder (0.1 %)": {"path_prefixes": ["/team07/project11"]},
        "hybrid, tags_all + dates (~0.8 %)": {
            "tags_all": ["tag01", "tag02"],
            "modified_after": FIRST_DAY,
            "modified_before": FIRST_DAY + 3 * YEAR,
        },
        "semantic": {"algorithm": "semantic"},
        "bm25": {"algorithm": "bm25"},
        "hybrid, granularity=document": {"granularity": "document"},
        "hybrid + facets": {"include_facets": True},
        "browse (no query)": {"browse": True},
    }


@dataclass(frozen=True)
class ProcessMemory:
    pid: int
    role: str  # http (the `serve` process), engine, rebuild (an engine optimizing a copy)
    rss_mib: float
    peak_rss_mib: float


def _children(pid: int) -> list[int]:
    """Direct children of `pid` (of every thread: the engine supervisor thread starts them)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def process_tree(pid: int) -> list[int]:
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo += _children(current)
    return tree


def _engine_started(pid: int) -> int | None:
    """When an engine process started (clock ticks after boot); None: not one, or gone."""
    try:
        if b"app.engine_child" not in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
            return None
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except OSError:
        return None


def process_roles(root: int) -> dict[int, str]:
    """`http` for `serve` (and any other child), `engine` for the engine process started first,
    `rebuild` for one started after it (a rebuild, until its handover: it then serves, and
    the old one exits)."""
    tree = process_tree(root)
    ticks = {pid: _engine_started(pid) for pid in tree if pid != root}
    started = {pid: tick for pid, tick in ticks.items() if tick is not None}
    engines = sorted(started, key=lambda pid: started[pid])
    roles = dict.fromkeys(tree, "http")
    roles.update((pid, "rebuild" if n else "engine") for n, pid in enumerate(engines))
    return roles


def process_memory(root: int) -> list[ProcessMemory]:
    """RSS of the service's processes: `serve` and its engine children."""
    found = []
    for pid, role in process_roles(root).items():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:  # exited meanwhile
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if "VmRSS" not in fields:  # exited, not reaped yet
            continue
        rss, peak = (round(int(fields[key].split()[0]) / 1024, 1) for key in ("VmRSS", "VmHWM"))
        found.append(ProcessMemory(pid, role, rss, peak))
    return found


def memory_by_role(root: int) -> dict[str, Any]:
    """`rss_mib` over all the service's processes, and per role (the sum of its processes)."""
    processes = process_memory(root)
    by_role: dict[str, Any] = {}
    for p in processes:
        row = by_role.setdefault(p.role, {"processes": 0, "rss_mib": 0.0, "peak_rss_mib": 0.0})
        row["processes"] += 1
        row["rss_mib"] = round(row["rss_mib"] + p.rss_mib, 1)
        row["peak_rss_mib"] = round(row["peak_rss_mib"] + p.peak_rss_mib, 1)
    return {
        "rss_mib": round(sum(p.rss_mib for p in processes), 1),
        "peak_rss_mib": round(sum(p.peak_rss_mib for p in processes), 1),
        "by_role": by_role,
    }


@dataclass
class Service:
    base: str
    process: subprocess.Popen[bytes]
    cold_start_s: float
    settled_s: float  # from start until the background loads after /readyz are done
    log: Path  # its stderr (and its engine processes')

    def memory_mib(self) -> dict[str, Any]:
        """RSS now and each process's peak, summed over `serve` and its engine processes."""
        return memory_by_role(self.process.pid)


def write_keys(path: Path) -> Path:
    keys = {
        BENCH_KEY: {"sub": BENCH_USER, "groups": [BENCH_GROUP], "scope": "search"},
        QUALITY_KEY: {"sub": "quality", "groups": [QUALITY_GROUP], "scope": "search"},
        INDEX_KEY: {"sub": "bench-loader", "groups": [], "scope": "index"},
    }
    path.write_text(json.dumps(keys))
    return path


@contextmanager
def running_service(
    data_dir: Path,
    timeout: float = 600,
    settings: dict[str, str] | None = None,
    wait_idle: bool = True,
    app_dir: Path | None = None,
) -> Iterator[Service]:
    """`serve` on a free port; yields once /readyz answers (and, with `wait_idle`, once its
    background loads are done). `settings`: more SEARCH_* variables for this run (an embedding
    server: SEARCH_EMBEDDING_URL, never inherited from this environment). `app_dir`: the
    checkout whose `app` runs (a baseline commit's worktree), else this one's."""
    port = free_port()
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    keys = write_keys(data_dir.parent / "keys.json")
    env = {k: v for k, v in os.environ.items() if k != "SEARCH_EMBEDDING_URL"} | {
        "SEARCH_DATA_DIR": str(data_dir),
        "SEARCH_COLLECTION": COLLECTION,
        "SEARCH_API_KEYS_FILE": str(keys),
        "SEARCH_JWT_SECRET": "",
        **(settings or {}),
    }
    base = f"http://127.0.0.1:{port}"
    log = data_dir.parent / "serve.log"  # a file: a pipe nobody reads fills up and stops serve
    started = time.perf_counter()
    with log.open("ab") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            cwd=app_dir,
        )
    try:
        cold = wait_ready(base, process, started, timeout, log)
        if wait_idle:
            _wait_idle(process.pid, timeout)
        yield Service(base, process, cold, time.perf_counter() - started, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def demo_service(
    data_dir: Path, key: str, scope: str, quiet: bool = False
) -> Iterator[tuple[str, float]]:
    """`serve` on a free port over `data_dir` with the demo corpus (`astrolabe-search demo` runs
    first and loads it if needed; `quiet`: its output captured), one API key `key` of `scope`
    for the demo's user in a keys file beside the data directory, and this environment's other
    settings. Yields the base URL and the seconds from the start until /readyz answered 200."""
    keys = data_dir.parent / "bench-keys.json"
    keys.parent.mkdir(parents=True, exist_ok=True)
    keys.write_text(json.dumps({key: {"sub": "dev", "groups": ["demo"], "scope": scope}}))
    env = os.environ | {"SEARCH_DATA_DIR": str(data_dir), "SEARCH_API_KEYS_FILE": str(keys)}
    subprocess.run([sys.executable, "-m", "app", "demo"], env=env, check=True, capture_output=quiet)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield base, wait_ready(base, server, started, timeout=300)
    finally:
        server.terminate()
        server.wait(timeout=60)


def wait_ready(
    base: str,
    process: subprocess.Popen[bytes],
    started: float,
    timeout: float,
    log: Path | None = None,
) -> float:
    # One client: `httpx.get` builds an SSL context a call (~15 ms of CPU), which polling every
    # 20 ms took from the service's start on the same two cores.
    with httpx.Client(timeout=1) as client:
        while time.perf_counter() - started < timeout:
            if process.poll() is not None:
                said = log.read_text(errors="replace")[-2000:] if log else ""
                raise RuntimeError(f"service exited with {process.returncode}: {said}")
            try:
                if client.get(f"{base}/readyz").status_code == 200:
                    return time.perf_counter() - started
            except httpx.HTTPError:
                pass
            time.sleep(0.02)
    raise RuntimeError("service did not become ready")


def stat_cpu_seconds(stat: Path) -> float | None:
    """CPU seconds (user + system) a `/proc/.../stat` file reports; None if it is gone."""
    try:
        fields = stat.read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(root: int) -> dict[int, float]:
    """CPU seconds (user + system) of each of the service's processes."""
    seconds = {}
    for pid in process_tree(root):
        if (used := stat_cpu_seconds(Path(f"/proc/{pid}/stat"))) is not None:
            seconds[pid] = used
    return seconds


def named_threads(pid: int, prefix: str) -> list[Path]:
    """The `/proc` task directories of one process's threads whose name starts with `prefix`."""
    named = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            if (task / "comm").read_text().startswith(prefix):
                named.append(task)
        except OSError:
            continue
    return named


def _used_since(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds the service's processes used between two readings (a new one: all of it)."""
    return sum(value - before.get(pid, 0.0) for pid, value in after.items())


def _wait_idle(pid: int, timeout: float, window: float = 1.0) -> None:
    """Until the service (`serve` and its engine processes) uses under 5 % of a core for
    `window` s: what it loads in the background after /readyz (the facet index) is done, and
    searches are measured alone."""
    deadline = time.perf_counter() + timeout
    before = cpu_seconds(pid)
    while time.perf_counter() < deadline:
        time.sleep(window)
        after = cpu_seconds(pid)
        if _used_since(before, after) < 0.05 * window:
            return
        before = after


def _body(query: str, extra: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in extra.items() if k != "browse"}
    body["query"] = "" if extra.get("browse") else query
    return body


@dataclass
class Samples:
    wall: list[float] = field(default_factory=list)
    embed: list[float] = field(default_factory=list)
    search: list[float] = field(default_factory=list)
    hits: list[int] = field(default_factory=list)


def latency(
    base: str, queries: list[str], rounds: int, rows: dict[str, dict[str, Any]] | None = None
) -> dict[str, dict[str, float]]:
    """Each scenario's queries (`rows`: the bench corpus's scenarios unless given),
    sequentially, scenarios interleaved round by round so that the machine's noise falls on all
    of them alike."""
    rows = scenarios() if rows is None else rows
    samples = {name: Samples() for name in rows}
    headers = {"Authorization": f"Bearer {BENCH_KEY}"}
    with httpx.Client(headers=headers, timeout=60) as client:
        for query in queries[:10]:  # warm-up: first-call costs, page cache
            for extra in rows.values():
                client.post(f"{base}/api/v1/search", json=_body(query, extra)).raise_for_status()
        for _ in range(rounds):
            for name, extra in rows.items():
                for query in queries:
                    started = time.perf_counter()
                    response = client.post(f"{base}/api/v1/search", json=_body(query, extra))
                    wall = (time.perf_counter() - started) * 1000
                    response.raise_for_status()
                    body = response.json()
                    s = samples[name]
                    s.wall.append(wall)
                    s.embed.append(float(body["timing_ms"]["embed"]))
                    s.search.append(float(body["timing_ms"]["search"]))
                    s.hits.append(len(body["results"]))
    return {
        name: percentiles(s.wall)
        | {
            "embed_p50": round(statistics.median(s.embed), 2),
            "search_p50": round(statistics.median(s.search), 2),
            "short_pages": sum(1 for n in s.hits if n < 10),
        }
        for name, s in samples.items()
    }


async def _load(
    base: str, queries: list[str], clients: int, seconds: float, extra: dict[str, Any]
) -> dict[str, float]:
    headers = {"Authorization": f"Bearer {BENCH_KEY}"}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    walls: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def worker(n: int, client: httpx.AsyncClient) -> None:
        nonlocal errors
        i = n
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            try:
                response = await client.post(
                    f"{base}/api/v1/search", json=_body(queries[i % len(queries)], extra)
                )
                if response.status_code == 200:
                    walls.append((time.perf_counter() - started) * 1000)
                else:
                    errors += 1
            except httpx.HTTPError:
                errors += 1
            i += clients

    async with httpx.AsyncClient(headers=headers, timeout=120, limits=limits) as client:
        began = time.perf_counter()
        await asyncio.gather(*(worker(n, client) for n in range(clients)))
        elapsed = time.perf_counter() - began
    return {
        "clients": clients,
        "searches": len(walls),
        "searches_per_s": round(len(walls) / elapsed, 1),
        "p50_ms": round(statistics.median(walls), 1) if walls else 0.0,
        "p99_ms": percentiles(walls)["p99"] if walls else 0.0,
        "errors": errors,
    }


def throughput(
    base: str,
    queries: list[str],
    levels: tuple[int, ...],
    seconds: float,
    extra: dict[str, Any] | None = None,
) -> list[dict[str, float]]:
    """Hybrid searches from `c` concurrent clients for `seconds` each, with the request fields
    `extra` (none: the access rule only)."""
    return [asyncio.run(_load(base, queries, c, seconds, extra or {})) for c in levels]


@dataclass
class Scores:
    """Per query, in order: nDCG@10, recall@100, and the wall time over HTTP."""

    ndcg: list[float]
    recall: list[float]
    wall_ms: list[float]


def ask(
    client: httpx.Client,
    base: str,
    queries: dict[str, str],
    qrels: dict[str, set[str]],
    body: dict[str, Any],
) -> Scores:
    """Every query (each one judged in `qrels`) with the request fields `body`: 100 results,
    each document counted once."""
    scores = Scores([], [], [])
    for qid, text in queries.items():
        request = {"query": text, "limit": 100, "granularity": "document", **body}
        started = time.perf_counter()
        response = client.post(f"{base}/api/v1/search", json=request)
        scores.wall_ms.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
        ranked = [str(r["doc_id"]) for r in response.json()["results"]]
        scores.ndcg.append(ndcg_at_10(ranked, qrels[qid]))
        scores.recall.append(len(set(ranked) & qrels[qid]) / len(qrels[qid]))
    return scores


def quality(
    base: str, queries: dict[str, str], qrels: dict[str, set[str]]
) -> dict[str, dict[str, float]]:
    """nDCG@10 and recall@100 per algorithm, one hit per document, as a user who sees all."""
    variants = {
        "bm25": {"algorithm": "bm25"},
        "semantic": {"algorithm": "semantic"},
        "hybrid rrf": {"algorithm": "hybrid", "fusion": "rrf"},
        "hybrid dbsf": {"algorithm": "hybrid", "fusion": "dbsf"},
    }
    judged = {qid: text for qid, text in queries.items() if qid in qrels}
    headers = {"Authorization": f"Bearer {QUALITY_KEY}"}
    results: dict[str, dict[str, float]] = {}
    with httpx.Client(headers=headers, timeout=60) as client:
        for name, extra in variants.items():
            scores = ask(client, base, judged, qrels, extra)
            results[name] = {
                "ndcg@10": round(statistics.mean(scores.ndcg), 4),
                "recall@100": round(statistics.mean(scores.recall), 4),
            }
    return results
