"""What the connector benchmark watches beside the service while it works: searches sent at a
steady pace (their latency by phase), the memory and CPU of each of the service's processes by
role, and a py-spy profile of `serve` when py-spy is installed."""

import collections
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.connector.world import QUERIES
from bench.harness.figures import percentiles
from bench.harness.service import BENCH_KEY, process_tree, stat_cpu_seconds

ROLES = {b"app.engine_child": "engine", b"app.extract.worker": "extract"}


def roles(root: int) -> dict[int, str]:
    """`serve` (HTTP, the connector's threads, the embedding model), `engine` (its engine
    processes), `extract` (the extraction workers)."""
    found = {}
    for pid in process_tree(root):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        role = next((r for marker, r in ROLES.items() if marker in argv), "other")
        found[pid] = "serve" if pid == root else role
    return found


def _status(pid: int) -> dict[str, str]:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def _mib(field: str) -> float:
    return int(field.split()[0]) / 1024


def cpu_by_role(root: int) -> dict[str, float]:
    """CPU seconds (user + system) so far of the service's live processes, by role."""
    out: dict[str, float] = collections.defaultdict(float)
    for pid, role in roles(root).items():
        if (used := stat_cpu_seconds(Path(f"/proc/{pid}/stat"))) is not None:
            out[role] += used
    return dict(out)


def cpu_spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {role: round(after[role] - before.get(role, 0.0), 1) for role in sorted(after)}


class MemorySampler:
    """The RSS of the service's processes every `period` s: the highest total seen, the highest
    per role, and each process's own peak (VmHWM) summed by role at the end."""

    def __init__(self, root: int, period: float = 0.25) -> None:
        self.root, self.period = root, period
        self.peak_total = 0.0
        self.peak_by_role: dict[str, float] = {}
        self.hwm: dict[int, tuple[str, float]] = {}
        self.first_total: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def __enter__(self) -> "MemorySampler":
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self._sample()

    def _sample(self) -> None:
        by_role: dict[str, float] = collections.defaultdict(float)
        for pid, role in roles(self.root).items():
            fields = _status(pid)
            if "VmRSS" not in fields:
                continue
            by_role[role] += _mib(fields["VmRSS"])
            self.hwm[pid] = (role, _mib(fields["VmHWM"]))
        total = sum(by_role.values())
        self.first_total = total if self.first_total is None else self.first_total
        self.peak_total = max(self.peak_total, total)
        for role, mib in by_role.items():
            self.peak_by_role[role] = max(self.peak_by_role.get(role, 0.0), mib)

    def figures(self) -> dict[str, Any]:
        hwm: dict[str, float] = collections.defaultdict(float)
        for role, mib in self.hwm.values():
            hwm[role] += mib
        return {
            "rss_before_mib": round(self.first_total or 0.0, 1),
            "peak_rss_mib": round(self.peak_total, 1),
            "peak_rss_by_role_mib": {r: round(v, 1) for r, v in sorted(self.peak_by_role.items())},
            "vmhwm_by_role_mib": {r: round(v, 1) for r, v in sorted(hwm.items())},
        }


class Prober:
    """Hybrid searches (as u0, the benchmark key) one after the other at `rate` a second,
    each latency kept under the phase it was sent in."""

    def __init__(self, base: str, rate: float = 10.0) -> None:
        self.base, self.period = base, 1.0 / rate
        self.phase = "before"
        self.samples: dict[str, list[float]] = collections.defaultdict(list)
        self.errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="prober", daemon=True)

    def __enter__(self) -> "Prober":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        headers = {"Authorization": f"Bearer {BENCH_KEY}"}
        with httpx.Client(headers=headers, timeout=60) as client:
            n = 0
            while not self._stop.is_set():
                started = time.perf_counter()
                phase = self.phase
                try:
                    response = client.post(
                        f"{self.base}/api/v1/search", json={"query": QUERIES[n % len(QUERIES)]}
                    )
                    ok = response.status_code == 200
                except httpx.HTTPError:
                    ok = False
                spent = time.perf_counter() - started
                if ok:
                    self.samples[phase].append(spent * 1000)
                else:
                    self.errors += 1
                n += 1
                self._stop.wait(max(0.0, self.period - spent))

    def figures(self, phase: str) -> dict[str, float]:
        walls = self.samples.get(phase, [])
        if not walls:
            return {"count": 0}
        return percentiles(walls) | {"max": round(max(walls), 1), "count": len(walls)}


class Profile:
    """py-spy sampling `serve`'s threads (idle ones too) while the block runs, when py-spy is
    installed (`pip install py-spy`); `where()` then splits the samples by what they were doing."""

    def __init__(self, pid: int, out: Path, rate: int = 20) -> None:
        self.pid, self.out, self.rate = pid, out, rate
        self.py_spy = shutil.which("py-spy") or _beside_python("py-spy")
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> "Profile":
        if self.py_spy:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            command = [self.py_spy, "record", "--pid", str(self.pid), "--rate", str(self.rate)]
            command += ["--format", "raw", "--output", str(self.out), "--idle", "--nonblocking"]
            self.process = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def where(self) -> dict[str, Any] | None:
        if self.process is None or not self.out.exists():
            return None
        return where_the_time_goes(self.out.read_text())


def _beside_python(name: str) -> str | None:
    import sys

    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else None


# What a sample of a thread was doing: the first step (in this order) one of whose frames,
# (function, file), is on its stack. The order settles nested steps: `accept` is inside the
# connector's `write`, which without it is waiting for room in the queue.
Frame = tuple[str | None, str]
STEPS: list[tuple[str, list[Frame]]] = [
    ("client set up (httpx.Client: its TLS context)", [("__init__", "app/nextcloud/client.py")]),
    ("download (GET, streamed to a scratch file)", [("_download", "app/nextcloud/files.py")]),
    ("extraction (in the worker, or waiting for it)", [("extract", "app/extract/sandbox.py")]),
    ("accept (placeholder written to the engine)", [("accept", "app/ingest/pipeline.py")]),
    ("queue full: waiting for room", [("write", "app/nextcloud/reconcile.py")]),
    ("relabel (labels rewritten in place)", [("relabel", "app/ingest/pipeline.py")]),
    ("verify-on-read (a DAV SEARCH to Nextcloud)", [(None, "app/nextcloud/verify.py")]),
    ("embedding (MiniLM)", [(None, "app/embeddings/dense.py")]),
    ("engine (chunks written, or searched)", [(None, "app/store/")]),
    ("ledger (SQLite)", [(None, "app/nextcloud/ledger.py")]),
    ("PROPFIND and its parsing", [("list", "app/nextcloud/walker.py")]),
    ("share lists (OCS)", [("read_grants", "app/nextcloud/shares.py")]),
    ("waiting for a folder's downloads", [("files_changed", "app/nextcloud/reconcile.py")]),
    ("waiting for what the tick queued", [("wait", "concurrent/futures/_base.py")]),
]
# The kinds of thread, by a frame on their stacks; the file readers, the embedding threads and
# the searches are counted while they work (their idle stacks carry no such frame).
THREADS: list[tuple[str, Frame]] = [
    ("connector: file readers (download pool)", ("_changed", "app/nextcloud/reconcile.py")),
    ("connector: user ticks (a thread each)", ("_run", "app/nextcloud/connector.py")),
    ("index queue worker", ("_run", "app/ingest/queue.py")),
    ("embedding threads (MiniLM)", ("_run", "app/embeddings/dense.py")),
    ("searches (HTTP worker threads)", ("search", "app/search/api.py")),
]
OTHER = "other (Python around the steps, or idle)"


def _frame(text: str) -> tuple[str, str]:
    """`function (path/to/file.py:123)` -> (function, path/to/file.py)."""
    name, _, rest = text.partition(" (")
    return name, rest.rpartition(":")[0] or rest.rstrip(")")


def _on(frames: list[tuple[str, str]], wanted: Frame) -> bool:
    name, path = wanted
    return any(
        (name is None or f[0] == name or f[0].endswith("." + name)) and path in f[1] for f in frames
    )


def where_the_time_goes(raw: str) -> dict[str, Any]:
    """py-spy's raw (collapsed) samples -> for each kind of thread, the share of its samples in
    each step (idle samples included: a thread waiting on a socket or a lock is in its step)."""
    counters: dict[str, collections.Counter[str]] = {n: collections.Counter() for n, _ in THREADS}
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [_frame(f) for f in stack.split(";")]
        kind = next((n for n, entry in THREADS if _on(frames, entry)), None)
        if kind is None:
            continue
        step = next((s for s, marks in STEPS if any(_on(frames, m) for m in marks)), OTHER)
        counters[kind][step] += int(count)
    out: dict[str, Any] = {}
    for kind, counter in counters.items():
        total = sum(counter.values())
        if total:
            share = {s: round(n / total, 3) for s, n in counter.most_common()}
            out[kind] = {"samples": total, "share": share}
    return out
