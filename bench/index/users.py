"""The live index on the users' corpus (bench.harness.users_corpus), measured from outside:

1. load: a fresh data directory, `serve` embedding through the stub (the corpus's vectors from
   the real model, computed once and cached), the documents sent over HTTP in batches of 256
   while a prober searches; right after, with no restart: every scenario, throughput with a tag
   filter at 1/4/16 clients and the CPU each search cost each process; then the merge the
   service makes of its rebuilds' segments once the writes pause, waited for;
2. restart: `serve` with the local model on the same directory (the merged index, as a user has
   it once the writes pause): `/readyz`, the first seconds' searches, every scenario, throughput
   and CPU again; with `--profile`, py-spy on `serve` and on its engine process during a
   16-client run (collapsed stacks beside the results);
3. with `--baseline DIR` (a worktree of an older commit): restarts of DIR's `serve` and of this
   one's, alternated on copies of the same data directory, the same figures for each, so that
   the two are compared in one window of the machine's load; with `--side-by-side ROUNDS`
   instead, both served at once and the 16-client throughput asked of each in alternated
   slices of `--seconds` (the CPU a search, where the machine drifts within minutes).

    .venv/bin/python -m bench.run --live --corpus users [--profile] [--baseline ../base]

Results: bench/results/live-users-100k.json."""

import contextlib
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from app.store.fields import embedded_text
from bench.harness import service
from bench.harness.corpus import load_vaswani
from bench.harness.embed_stub import embed_stub
from bench.harness.encoder import text_key
from bench.harness.prepare import model_encoder
from bench.harness.results import load_average
from bench.harness.users_corpus import (
    THROUGHPUT_FILTER,
    UsersCorpus,
    users_corpus,
    users_scenarios,
)
from bench.index.live import LOAD_BATCH, Prober, first_seconds, send, status, wait_for_merge

PROFILE_CLIENTS = 16
SEARCH_POOL = "edge-search"  # the name Qdrant Edge gives its search threads
TOP_FUNCTIONS = 25


def stub_table(out: Path, corpus: UsersCorpus, smoke: bool, cache: Path) -> Path:
    """The stub's table of the corpus's vectors (`dense.f32`, `dense.keys`), made once."""
    table = out / "dense"
    keys = table.with_suffix(".keys")
    if keys.exists():
        return table
    out.mkdir(parents=True, exist_ok=True)
    texts = [embedded_text(d.title, d.content) for d in corpus.documents]
    encoder = model_encoder(cache, hashing=smoke)
    vectors = encoder.encode_array(texts)
    encoder.save()
    vectors.astype("float32").tofile(table.with_suffix(".f32"))
    partial = keys.with_suffix(".partial")
    partial.write_text("".join(f"{text_key(t)}\n" for t in texts))
    partial.replace(keys)
    return table


def cpu_by_role(pid: int) -> dict[str, float]:
    """CPU seconds so far of the service's processes, summed per role (http, engine ...)."""
    seconds = service.cpu_seconds(pid)
    by_role: dict[str, float] = {}
    for child, role in service.process_roles(pid).items():
        by_role[role] = by_role.get(role, 0.0) + seconds.get(child, 0.0)
    return by_role


def search_pool(pid: int) -> list[Path]:
    """The engine's search pool: Qdrant Edge's native threads, which do a call's work (py-spy
    does not see them). The rest of the engine process is the calls' Python: the wire, the
    requests and answers converted, the hits built."""
    engines = [child for child, role in service.process_roles(pid).items() if role == "engine"]
    return service.named_threads(engines[0], SEARCH_POOL) if engines else []


def cpu_of(threads: list[Path]) -> float:
    """CPU seconds so far of these threads (`/proc` task directories)."""
    return sum(service.stat_cpu_seconds(task / "stat") or 0.0 for task in threads)


def throughput_with_cpu(
    svc: service.Service, queries: list[str], args: Any, clients: tuple[int, ...] | None = None
) -> list[Any]:
    """Throughput with the tag filter at each level, and the CPU milliseconds a search cost
    each process (their CPU over the run / the searches answered), the engine's split between
    its search pool and the rest."""
    levels = []
    for level_clients in clients or args.clients:
        before, pool_before = cpu_by_role(svc.process.pid), cpu_of(search_pool(svc.process.pid))
        (level,) = service.throughput(
            svc.base, queries, (level_clients,), args.seconds, THROUGHPUT_FILTER
        )
        after, pool = cpu_by_role(svc.process.pid), search_pool(svc.process.pid)
        searches = max(1, int(level["searches"]))
        cpu = {role: round(1000 * (after[role] - before.get(role, 0.0)) / searches, 2)
               for role in after}  # fmt: skip
        pool_ms = round(1000 * (cpu_of(pool) - pool_before) / searches, 2)
        split = {"search_pool": pool_ms, "calls": round(cpu.get("engine", 0.0) - pool_ms, 2)}
        split["search_pool_threads"] = len(pool)
        levels.append(
            level
            | {"cpu_ms_per_search": cpu | {"all": round(sum(cpu.values()), 2)}}
            | {"engine_cpu_ms_per_search": split}
        )
    return levels


def measured(svc: service.Service, queries: list[str], args: Any) -> dict[str, Any]:
    return {
        "status": status(svc.base),
        "latency": service.latency(svc.base, queries, args.rounds, users_scenarios()),
        "throughput": throughput_with_cpu(svc, queries, args),
        "memory": svc.memory_mib(),
        "load_average": load_average(),
    }


def profile(svc: service.Service, queries: list[str], args: Any, out: Path) -> dict[str, Any]:
    """py-spy on every process of the service during a 16-client run: the functions that took
    the most samples (self time), per process role; the raw stacks are kept in `out`. Only the
    thread holding the GIL is sampled (`--gil`): without it, threads waiting for the GIL were
    counted as working. Qdrant Edge holds the GIL through each call while its search pool (native
    threads py-spy cannot sample) does the work, so a call's samples are its time, not its CPU:
    `engine_cpu_ms_per_search` in the throughput gives that split. ONNX Runtime releases the GIL,
    but the users' queries repeat and their vectors come from the query cache."""
    out.mkdir(parents=True, exist_ok=True)
    spies = []
    for pid, role in service.process_roles(svc.process.pid).items():
        stacks = out / f"{role}-{pid}.txt"
        command = [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(pid)]
        command += ["--duration", str(int(args.seconds) + 2), "--rate", "250", "--format", "raw"]
        command += ["--gil", "--nonblocking", "--output", str(stacks)]
        spy = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        spies.append((role, stacks, spy))
    time.sleep(1.0)  # py-spy attached
    runner = threading.Thread(
        target=service.throughput,
        args=(svc.base, queries, (PROFILE_CLIENTS,), args.seconds, THROUGHPUT_FILTER),
    )
    runner.start()
    for _, _, spy in spies:
        spy.wait()
    runner.join()
    return {role: top_functions(stacks) for role, stacks, _ in spies if stacks.exists()}


def top_functions(stacks: Path) -> dict[str, Any]:
    """The functions that took the most of the process's samples (py-spy leaves out threads the
    kernel says sleep): by self time (the leaf of each stack) and by inclusive time (anywhere in
    the stack), each as a share of all samples."""
    self_time: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = 0
    for line in stacks.read_text().splitlines():
        frames, _, count = line.rpartition(" ")
        names = [frame.split(" (")[0] + " (" + frame.rsplit("/", 1)[-1] for frame in
                 frames.split(";")]  # fmt: skip
        total += int(count)
        self_time[names[-1]] = self_time.get(names[-1], 0) + int(count)
        for name in set(names):
            inclusive[name] = inclusive.get(name, 0) + int(count)
    return {
        "samples": total,
        "self": _shares(self_time, total),
        "inclusive": _shares(inclusive, total),
    }


def _shares(counts: dict[str, int], total: int) -> list[dict[str, Any]]:
    ranked = sorted(counts.items(), key=lambda item: -item[1])[:TOP_FUNCTIONS]
    return [{"function": name, "share": round(n / max(1, total), 4)} for name, n in ranked]


def restart(data_dir: Path, queries: list[str], args: Any, app_dir: Path | None = None) -> Any:
    with service.running_service(data_dir, wait_idle=False, app_dir=app_dir) as svc:
        result: dict[str, Any] = {"cold_start_s": round(svc.cold_start_s, 2)}
        result["first_seconds"] = first_seconds(svc.base, queries, args.first_seconds)
        result |= measured(svc, queries, args)
        if args.profile:
            result["profile"] = profile(svc, queries, args, data_dir.parent / "profile")
    return result


def index_copy(data_dir: Path, args: Any, side: str, purpose: str) -> Path:
    """A fresh copy of the index for one side: the baseline's own (`args.baseline_data`) where
    given, else `data_dir`."""
    copy = data_dir.parent / f"{purpose}-{side}" / "data"
    shutil.rmtree(copy.parent, ignore_errors=True)
    copy.parent.mkdir(parents=True)
    source = args.baseline_data if side == "baseline" and args.baseline_data else data_dir
    subprocess.run(["cp", "-a", "--sparse=always", str(source), str(copy)], check=True)
    return copy


def compare(data_dir: Path, queries: list[str], args: Any) -> dict[str, Any]:
    """This checkout against `args.baseline`, restarted in turn on copies of `data_dir` (the
    baseline on `args.baseline_data`'s, where given: an index its own code loaded)."""
    runs: dict[str, list[Any]] = {"baseline": [], "current": []}
    for _ in range(args.runs):
        for name, app_dir in (("baseline", args.baseline), ("current", None)):
            copy = index_copy(data_dir, args, name, "compare")
            runs[name].append(restart(copy, queries, args, app_dir))
    return {"baseline_dir": str(args.baseline), "runs": runs, "medians": medians(runs)}


def side_by_side(data_dir: Path, queries: list[str], args: Any) -> dict[str, Any]:
    """This checkout and `args.baseline` served at once, each on its copy of the index, and the
    16-client throughput (tag filter) asked of one then the other in slices of `args.seconds`,
    `args.side_by_side` rounds, the order swapped each round: the machine's drift (here up to
    1.6x within minutes) falls on both alike, where restarts in turn each caught their own
    minutes. Per side: the CPU a search over all its slices, per process and the engine's
    split, and the median slice."""
    sides = {"baseline": args.baseline, "current": args.app_dir}
    with contextlib.ExitStack() as stack:
        served = {}
        for name, app_dir in sides.items():
            copy = index_copy(data_dir, args, name, "side")
            served[name] = stack.enter_context(service.running_service(copy, app_dir=app_dir))
        slices: dict[str, list[Any]] = {name: [] for name in served}
        for turn in range(args.side_by_side):
            for name in sorted(served, reverse=bool(turn % 2)):
                svc = served[name]
                level, *_ = throughput_with_cpu(svc, queries, args, clients=(PROFILE_CLIENTS,))
                slices[name].append(level)
        return {"load_average": load_average()} | {
            name: summed(levels) for name, levels in slices.items()
        }


def summed(levels: list[dict[str, Any]]) -> dict[str, Any]:
    """Slices of throughput_with_cpu as one run: the CPU a search over all of them."""
    searches = sum(level["searches"] for level in levels)

    def per_search(key: str, part: str) -> float:
        used = sum(float(level[key][part]) * int(level["searches"]) for level in levels)
        return round(used / max(1, int(searches)), 3)

    cpu = {part: per_search("cpu_ms_per_search", part) for part in levels[0]["cpu_ms_per_search"]}
    split = {
        part: per_search("engine_cpu_ms_per_search", part) for part in ("search_pool", "calls")
    }
    rates = [level["searches_per_s"] for level in levels]
    return {
        "searches": searches,
        "cpu_ms_per_search": cpu,
        "engine_cpu_ms_per_search": split,
        "searches_per_s_median": statistics.median(rates),
        "slices": levels,
    }


def medians(runs: dict[str, list[Any]]) -> dict[str, Any]:
    """Per side: median over its runs of each scenario's p50, of the 16-client rate and CPU."""
    summary: dict[str, Any] = {}
    for name, side in runs.items():
        rows = side[0]["latency"]
        summary[name] = {
            "p50_ms": {r: statistics.median(s["latency"][r]["p50"] for s in side) for r in rows},
            "cold_start_s": statistics.median(s["cold_start_s"] for s in side),
            "searches_per_s_16": statistics.median(
                s["throughput"][-1]["searches_per_s"] for s in side
            ),
            "cpu_ms_per_search_16": statistics.median(
                s["throughput"][-1]["cpu_ms_per_search"]["all"] for s in side
            ),
        }
    return summary


def measure_users(root: Path, args: Any) -> dict[str, Any]:
    docs, _, _ = load_vaswani(args.dataset)
    corpus = users_corpus(docs, 300 if args.smoke else 100_000)
    out = root / "tiers" / ("users-smoke" if args.smoke else "users-100k")
    table = stub_table(out, corpus, args.smoke, root / "cache")
    data_dir = out / "live" / "data"
    result: dict[str, Any] = {"corpus": "users", "documents": len(corpus.documents)}
    if not args.reuse:
        shutil.rmtree(data_dir, ignore_errors=True)
        with (
            embed_stub([table], hashing=args.smoke) as stub,
            service.running_service(
                data_dir,
                settings={"SEARCH_EMBEDDING_URL": stub.url},
                wait_idle=False,
                app_dir=args.app_dir,
            ) as svc,
        ):
            with Prober(svc.base, svc.process.pid, corpus.queries, interval=0.1) as prober:
                result["load"] = send(svc.base, corpus.documents, LOAD_BATCH) | prober.result()
            loaded_at, since = time.perf_counter(), svc.log.stat().st_size
            result["load"] |= {"stub": stub.stats(), "load_average": load_average()}
            result["after_load"] = measured(svc, corpus.queries, args)
            # The restarts measure the index a user has once the writes pause: merged.
            result["merge"] = wait_for_merge(svc, loaded_at, since)
    if not (args.reuse and args.baseline):  # else the comparison's restarts are the measure
        result["restart"] = restart(data_dir, corpus.queries, args, args.app_dir)
    if args.baseline:
        measure = side_by_side if args.side_by_side else compare
        result["compare"] = measure(data_dir, corpus.queries, args)
    return result
