"""The measurements: the real `serve` on a loopback port with its connector pointed at the
dialect (in this process), users connected over the API, the figures taken from outside: the
dialect's clocked requests, the service's status, its processes in /proc, searches."""

import itertools
import json
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.connector.probes import MemorySampler, Prober, Profile, cpu_by_role, cpu_spent
from bench.connector.world import DEEP, USERS, TimedApp, Timing, World, build, timed_dialect
from bench.harness import service
from bench.harness.embed_stub import embed_stub
from bench.harness.model import chunks_per_second
from bench.harness.results import load_average
from bench.harness.service import BENCH_KEY, INDEX_KEY, Service
from tests.nextcloud.dialect import NextcloudDialect

SECRET_KEY = "connector-bench-secret-key-0123456789"
WEBHOOK_SECRET = "connector-bench-webhook-secret"
SHARES_INTERVAL = 3600.0  # share lists and apps are not due during a measurement
CREATED = "OCP\\Files\\Events\\Node\\NodeCreatedEvent"
WRITTEN = "OCP\\Files\\Events\\Node\\NodeWrittenEvent"
VERIFY = "SEARCH"  # the DAV SEARCH verify-on-read sends for a search's hits


@dataclass
class Bench:
    nc: NextcloudDialect
    timed: TimedApp
    world: World
    svc: Service
    admin: httpx.Client  # the index key: connect users, status, force a tick
    searcher: httpx.Client  # the benchmark key: user u0
    interval: float


@contextmanager
def _embedding(smoke: bool) -> Iterator[dict[str, str]]:
    """Smoke runs: the hashing encoder behind bench.harness.embed_stub (no model); else the
    local model in `serve` (no setting)."""
    if not smoke:
        yield {}
        return
    with embed_stub([], hashing=True) as stub:
        yield {"SEARCH_EMBEDDING_URL": stub.url}


@contextmanager
def running(data_dir: Path, files: int, interval: float, smoke: bool) -> Iterator[Bench]:
    """A fresh dialect holding `files` files (bench.connector.world) and a fresh `serve` with
    its connector on it; no user connected yet."""
    nc, timed = timed_dialect()
    world = build(nc, files)
    with ExitStack() as stack:
        stack.enter_context(nc)
        extra = stack.enter_context(_embedding(smoke))
        settings = {
            "SEARCH_NEXTCLOUD_URL": nc.url,
            "SEARCH_SECRET_KEY": SECRET_KEY,
            "SEARCH_NEXTCLOUD_WEBHOOK_SECRET": WEBHOOK_SECRET,
            "SEARCH_NEXTCLOUD_INTERVAL": str(interval),
            "SEARCH_NEXTCLOUD_SHARES_INTERVAL": str(SHARES_INTERVAL),
            **extra,
        }
        svc = stack.enter_context(service.running_service(data_dir, settings=settings))
        admin = stack.enter_context(_client(svc.base, INDEX_KEY))
        searcher = stack.enter_context(_client(svc.base, BENCH_KEY))
        yield Bench(nc, timed, world, svc, admin, searcher, interval)


def _client(base: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60)


def users(bench: Bench) -> dict[str, dict[str, Any]]:
    response = bench.admin.get("/api/v1/nextcloud/users")
    response.raise_for_status()
    return {line["user_id"]: line for line in response.json()["users"]}


def index_status(bench: Bench) -> dict[str, Any]:
    response = bench.admin.get("/api/v1/vector-sync/status")
    response.raise_for_status()
    body: dict[str, Any] = response.json()
    return body


def wait_settled(bench: Bench, timeout: float) -> dict[str, dict[str, Any]]:
    """Until every user's first tick ended with nothing pending and the index is idle."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = users(bench)
        ticked = len(lines) == len(USERS) and all(
            line["last_tick"] is not None and line["pending"] == 0 for line in lines.values()
        )
        if ticked and index_status(bench)["status"] == "idle":
            return lines
        time.sleep(0.25)
    raise RuntimeError(f"the first index did not settle in {timeout} s: {users(bench)}")


def found(bench: Bench, token: str) -> bool:
    response = bench.searcher.post("/api/v1/search", json={"query": token, "algorithm": "bm25"})
    response.raise_for_status()
    return bool(response.json()["results"])


def wait_found(bench: Bench, token: str, timeout: float) -> float:
    """When (time.time()) a search as u0 first finds `token`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found(bench, token):
            return time.time()
        time.sleep(0.02)
    raise RuntimeError(f"{token!r} was not searchable within {timeout} s")


def wait_tick_after(bench: Bench, uid: str, moment: float, timeout: float = 120) -> float:
    """The end (last_tick) of uid's first tick that ends after `moment`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        last = users(bench)[uid]["last_tick"]
        if last is not None and last > moment:
            return float(last)
        time.sleep(0.02)
    raise RuntimeError(f"no tick of {uid} ended within {timeout} s")


def kind(t: Timing) -> str:
    if t.method == "PROPFIND":
        return f"PROPFIND Depth {t.depth}"
    if t.method == "GET" and t.path.startswith("/ocs/"):
        return "GET OCS"
    if t.method == "GET" and t.path.startswith("/remote.php/dav/files/"):
        return "GET file"
    if t.method == VERIFY:
        return "SEARCH (verify-on-read)"
    return f"{t.method} other" if t.method == "GET" else t.method


def ticks_requests(bench: Bench, uid: str, start: float, end: float) -> list[Timing]:
    """uid's requests to the dialect that arrived between `start` and `end` (time.time()), less
    the SEARCHes that verify its searches' hits (verify-on-read: not the sync's)."""
    return [
        t
        for t in bench.timed.since(start)
        if t.user == uid and t.started <= end and t.method != VERIFY
    ]


def _requests(bench: Bench, uid: str, start: float, end: float) -> dict[str, Any]:
    mine = ticks_requests(bench, uid, start, end)
    kinds = Counter(kind(t) for t in mine)
    return {"total": len(mine), "by_kind": dict(sorted(kinds.items()))}


# the first index -----------------------------------------------------------------------------


def first_index(bench: Bench, prober: Prober | None, profile_to: Path | None) -> dict[str, Any]:
    """Connect the three users at once and wait until everything they see is searchable."""
    pid = bench.svc.process.pid
    load_before = load_average()
    cpu_before = cpu_by_role(pid)
    started_wall, started = time.time(), time.perf_counter()
    with ExitStack() as stack:
        memory = stack.enter_context(MemorySampler(pid))
        profile = stack.enter_context(Profile(pid, profile_to)) if profile_to else None
        if prober is not None:
            prober.phase = "first index"
        for uid in USERS:
            response = bench.admin.post(
                "/api/v1/nextcloud/users",
                json={"login_name": uid, "app_password": bench.nc.app_password(uid)},
            )
            if response.status_code != 201:
                raise RuntimeError(f"connecting {uid}: {response.status_code} {response.text}")
        lines = wait_settled(bench, timeout=3600)
        seconds = time.perf_counter() - started
        if prober is not None:
            prober.phase = "after"
    cpu = cpu_spent(cpu_before, cpu_by_role(pid))
    status = index_status(bench)
    timings = bench.timed.since(started_wall)
    dialect: dict[str, dict[str, float]] = {}
    for t in timings:
        row = dialect.setdefault(kind(t), {"requests": 0, "seconds": 0.0})
        row["requests"] += 1
        row["seconds"] += t.seconds
    gets = [r for r in bench.nc.log.snapshot() if r.method == "GET" and "/dav/files/" in r.path]
    result = {
        "files": bench.world.files,
        "seconds": round(seconds, 1),
        "files_per_s": round(bench.world.files / seconds, 1),
        "chunks_per_s": round(status["indexed_chunks"] / seconds, 1),
        "indexed_documents": status["indexed_documents"],
        "indexed_chunks": status["indexed_chunks"],
        "failed_documents": status["failed_documents"],
        "users": {
            uid: {k: line[k] for k in ("state", "files_seen", "indexed", "skipped", "last_error")}
            for uid, line in sorted(lines.items())
        },
        "downloads": len(gets),
        "downloaded_mib": round(sum(r.bytes for r in gets) / 2**20, 1),
        "cpu_s_by_role": cpu,
        "dialect": {
            m: {"requests": int(r["requests"]), "seconds": round(r["seconds"], 2)}
            for m, r in sorted(dialect.items())
        },
        "memory": memory.figures(),
        "load_average_before": load_before,
        "load_average": load_average(),
    }
    if profile is not None:
        result["profile"] = profile.where()
    return result


# ticks ---------------------------------------------------------------------------------------


def idle_ticks(bench: Bench, seconds: float) -> dict[str, Any]:
    """Each user's ticks for `seconds` while nothing changes: requests a tick (the dialect's
    clock, by user), and how long each took, seen from outside: the gap between two ends of
    ticks (last_tick) less the interval the runner sleeps between them."""
    load_before = load_average()
    ends: dict[str, list[float]] = {uid: [] for uid in USERS}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for uid, line in users(bench).items():
            last = line["last_tick"]
            if last is not None and (not ends[uid] or ends[uid][-1] != last):
                ends[uid].append(float(last))
        time.sleep(0.05)
    durations, after_request, requests, kinds = [], [], [], Counter[str]()
    for uid, marks in ends.items():
        for previous, end in itertools.pairwise(marks):
            durations.append((end - previous - bench.interval) * 1000)
            mine = ticks_requests(bench, uid, previous, end)
            requests.append(len(mine))
            kinds.update(kind(t) for t in mine)
            if mine:
                after_request.append((end - mine[0].started) * 1000)
    if not durations:
        raise RuntimeError(f"no idle tick seen in {seconds} s: {ends}")
    return {
        "ticks": len(durations),
        "requests_per_tick": dict(sorted(Counter(requests).items())),
        "request_kinds": dict(kinds),
        "tick_ms_median": round(statistics.median(durations), 1),
        "tick_ms_max": round(max(durations), 1),
        "from_request_to_end_ms_median": round(statistics.median(after_request), 1),
        "load_average_before": load_before,
        "load_average": load_average(),
    }


def _token() -> str:
    return "zq" + uuid.uuid4().hex[:10]


def _capture(nc: NextcloudDialect) -> tuple[list[dict[str, Any]], Any]:
    captured: list[dict[str, Any]] = []
    listener = captured.append
    nc.world.listeners.append(listener)
    return captured, listener


def change(bench: Bench, how: str, new: bool, n: int, timeout: float) -> dict[str, Any]:
    """One change in u0's deep private folder (a new file, or the deep file edited) and the
    time until a search as u0 finds it; `how`: "webhook" (the envelope POSTed to the service at
    once, as Nextcloud's webhook_listeners sends it) or "poll" (the next tick finds it)."""
    uid = USERS[0]
    token = _token()
    path = f"{DEEP}/change-{n}.txt" if new else bench.world.deep_files[uid]
    text = f"A change deep in the tree: {token} and the harbour lantern.".encode()
    captured, listener = _capture(bench.nc)
    load_before = load_average()
    started = time.time()
    try:
        bench.nc.put(uid, path, text)
    finally:
        bench.nc.world.listeners.remove(listener)
    if how == "webhook":
        event = next(e for e in captured if e["event"]["class"] in (CREATED, WRITTEN))
        response = bench.admin.post(
            "/webhooks/nextcloud",
            content=json.dumps(event).encode(),
            headers={"Authorization": f"Bearer {WEBHOOK_SECRET}"},
        )
        response.raise_for_status()
    seen = wait_found(bench, token, timeout)
    ended = wait_tick_after(bench, uid, started)
    return {
        "searchable_s": round(seen - started, 2),
        "requests": _requests(bench, uid, started, ended),
        "load_average_before": load_before,
    }


def changes(bench: Bench, how: str, new: bool, repeats: int, timeout: float) -> dict[str, Any]:
    runs = []
    for n in range(repeats):
        runs.append(change(bench, how, new, n + (100 if how == "webhook" else 0), timeout))
        time.sleep(0.2)
    latencies = [r["searchable_s"] for r in runs]
    return {
        "searchable_s_median": round(statistics.median(latencies), 2),
        "searchable_s_max": round(max(latencies), 2),
        "requests_median": statistics.median(r["requests"]["total"] for r in runs),
        "runs": runs,
        "load_average": load_average(),
    }


def model_rate(world: World) -> dict[str, Any]:
    """The local model alone on texts like the files' (title, newline, text; one chunk each),
    in this process with the service stopped: the yardstick for the first index's rate."""
    from app.embeddings.dense import MiniLMEncoder

    encoder = MiniLMEncoder()
    encoder.encode(world.texts[:16])  # first-call costs
    load_before = load_average()
    rates = [chunks_per_second(encoder, world.texts) for _ in range(3)]
    return {
        "texts": len(world.texts),
        "chunks_per_s_median": round(statistics.median(rates), 1),
        "load_average_before": load_before,
        "load_average": load_average(),
    }
