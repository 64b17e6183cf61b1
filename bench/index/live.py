"""The live index (issue 16), measured from outside as a client that feeds documents over HTTP:

1. load: a fresh data directory, `serve` embedding through `bench.harness.embed_stub` (the
   tier's chunk vectors from the bench's tables, queries through the real model), the tier's
   documents sent with `POST /api/v1/documents?wait=true` in batches of 256 while a prober
   searches every 100 ms; right after, with no restart: every scenario, throughput, status,
   memory; and again once the service has merged, by itself, the segments its rebuilds left
   (after the writes paused);
2. trickle: new documents at 50 a second while the prober searches every 50 ms;
3. restart: `serve` again on the same data directory with the local model: cold start, the
   searches of the first seconds after /readyz, every scenario.

Tiers past HTTP_LOAD_MAX (the 1m tier) are prepared through the store layer as bench.harness.prepare
does and start at the trickle, once the service has read its index back. The peers' live side
is in bench.peers (`--live`)."""

import gc
import itertools
import json
import re
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from app.ingest.documents import Document
from app.ingest.models import DocumentIn
from app.store.edge import EdgeStore
from bench.harness import service
from bench.harness.corpus import SEED, derived_chunks, real_chunks
from bench.harness.embed_stub import embed_stub
from bench.harness.encoder import CachedEncoder, text_key
from bench.harness.figures import disk_mib, percentiles
from bench.harness.prepare import (
    COLLECTION,
    HTTP_LOAD_MAX,
    TIERS,
    Tier,
    batched_points,
    derived_points,
    live_data_dir,
    model_encoder,
    prepare,
    prepare_files,
    read_peer_files,
    real_points,
    tier_dir,
    upsert_file,
    write_points,
)
from bench.harness.results import load_average
from bench.index.hnsw import Side, Workload, probe

LOAD_BATCH = 256
TRICKLE_BATCH = 10
STALL_MS = 100.0  # a probe slower than this is listed with its moment
TIMELINE_EVERY = 5  # of the status readings (one a second), the ones kept in the results
MERGE_WAIT_S = 1800.0  # from the last write of the load until the merge is reported done
TRICKLE_SEED, TRICKLE_PREFIX = SEED + 2, "live"  # new documents, none of them in any tier


def tier_documents(tier: Tier, docs: dict[str, str]) -> list[Document]:
    """The documents the tier's points are the chunks of (the service chunks them alike)."""
    real = real_chunks(docs, tier.real_docs)
    documents = list({c.doc.key: c.doc for c in real}.values())
    derived = derived_chunks(real, max(0, tier.chunks - len(real)))
    return documents + [chunk.doc for chunk, _, _ in derived]


def trickle_documents(
    out: Path, tier: Tier, docs: dict[str, str], encoder: CachedEncoder, count: int
) -> list[Document]:
    """`count` new derived documents, their points written as plain files (`trickle.jsonl`,
    `trickle.f32`) beside the tier's: the stub's table, and what the peers load after the tier."""
    real, vectors = real_points(tier, docs, encoder)
    documents: list[Document] = []
    with (out / "trickle.f32").open("wb") as dense, (out / "trickle.jsonl").open("w") as lines:
        blocks = derived_points(real, vectors, count, seed=TRICKLE_SEED, prefix=TRICKLE_PREFIX)
        for chunks, mixed in blocks:
            write_points(dense, lines, chunks, mixed)
            documents += [c.doc for c in chunks]
    return documents


def write_stub_keys(points: Path, table: Path) -> Path:
    """The stub's table `table` (`.keys` beside the `.f32` of the same points): the SHA-1 of
    each point's embedded text, in the order of `points` (kept while that file is older)."""
    keys, partial = table.with_suffix(".keys"), table.with_suffix(".keys.partial")
    if keys.exists() and keys.stat().st_mtime >= points.stat().st_mtime:
        return table
    with partial.open("w") as out:
        for part in batched_points(points, LOAD_BATCH):
            out.write("".join(f"{text_key(str(p['embed_text']))}\n" for p in part))
    partial.replace(keys)
    return table


def summary(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {"count": 0}
    return percentiles(samples) | {"max": round(max(samples), 1), "count": len(samples)}


@dataclass
class Prober:
    """A hybrid search every `interval` s from a thread of its own (the next at once when one
    took longer), every latency kept; a second thread reads the status and the service's
    memory each second. The longest probe is the longest stall a user saw."""

    base: str
    pid: int
    queries: list[str]
    interval: float
    samples: list[tuple[float, float]] = field(default_factory=list)  # (s since start, ms)
    errors: int = 0
    timeline: list[dict[str, Any]] = field(default_factory=list)
    peak_rss_mib: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _began: float = field(default_factory=time.perf_counter)

    def __enter__(self) -> "Prober":
        self._threads = [
            threading.Thread(target=self._probe, daemon=True),
            threading.Thread(target=self._watch, daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def _probe(self) -> None:
        headers = {"Authorization": f"Bearer {service.BENCH_KEY}"}
        due = time.perf_counter()
        with httpx.Client(headers=headers, timeout=120) as client:
            for query in itertools.cycle(self.queries):
                if self._stop.is_set():
                    return
                started = time.perf_counter()
                try:
                    answer = client.post(f"{self.base}/api/v1/search", json={"query": query})
                    ok = answer.status_code == 200
                except httpx.HTTPError:
                    ok = False
                if ok:
                    wall = (time.perf_counter() - started) * 1000
                    self.samples.append((round(started - self._began, 2), round(wall, 1)))
                else:
                    self.errors += 1
                due = max(due + self.interval, time.perf_counter())
                self._stop.wait(due - time.perf_counter())

    def _watch(self) -> None:
        while True:
            try:
                status = httpx.get(f"{self.base}/api/v1/status", timeout=30).json()
            except httpx.HTTPError:
                status = {}
            memory = service.memory_by_role(self.pid)
            self.peak_rss_mib = max(self.peak_rss_mib, memory["rss_mib"])
            self.timeline.append(
                {
                    "t": round(time.perf_counter() - self._began, 1),
                    "chunks": status.get("chunks"),
                    "unindexed": status.get("unindexed_chunks"),
                    "rebuilding": status.get("hnsw_rebuilding"),
                    "rebuilds": status.get("hnsw_rebuilds"),
                    "rss_mib": memory["rss_mib"],
                }
            )
            if self._stop.wait(1.0):
                return

    def _by_rebuild(self) -> dict[str, dict[str, float]]:
        """The searches split by whether the last status read before them said a rebuild was
        running."""
        split: dict[str, list[float]] = {"rebuilding": [], "not rebuilding": []}
        readings = iter(self.timeline)
        current: dict[str, Any] = {}
        upcoming = next(readings, None)
        for t, ms in self.samples:
            while upcoming is not None and upcoming["t"] <= t:
                current, upcoming = upcoming, next(readings, None)
            split["rebuilding" if current.get("rebuilding") else "not rebuilding"].append(ms)
        return {state: summary(walls) for state, walls in split.items()}

    def result(self) -> dict[str, Any]:
        walls = [ms for _, ms in self.samples]
        stalls = [{"t": t, "ms": ms} for t, ms in self.samples if ms > STALL_MS]
        return {
            "searches": summary(walls),
            "searches_by_rebuild": self._by_rebuild(),
            "errors": self.errors,
            "stalls_over_ms": STALL_MS,
            "slow_searches": len(stalls),
            "stalls": stalls[:50],
            "peak_rss_mib": self.peak_rss_mib,
            "timeline": self.timeline[::TIMELINE_EVERY],
        }


def _api_document(document: Document) -> dict[str, Any]:
    """The fields `POST /api/v1/documents` takes (the queue's own, such as pages, left out)."""
    payload = document.to_payload()
    return {name: value for name, value in payload.items() if name in DocumentIn.model_fields}


def _post_documents(client: httpx.Client, base: str, batch: list[Document]) -> tuple[int, int]:
    """One batch with ?wait=true; answers (chunks, retries): a 429 or 503 is sent again."""
    body = {"documents": [_api_document(d) for d in batch]}
    for retries in itertools.count():
        answer = client.post(f"{base}/api/v1/documents", params={"wait": "true"}, json=body)
        if answer.status_code == 200:
            return int(answer.json()["chunks"]), retries
        if answer.status_code not in (429, 503) or retries >= 20:
            raise RuntimeError(f"ingest answered {answer.status_code}: {answer.text[:300]}")
        time.sleep(float(answer.headers.get("Retry-After", 1)))
    raise AssertionError("unreachable")


def send(
    base: str, documents: list[Document], batch: int, every: float | None = None
) -> dict[str, Any]:
    """The documents in batches with ?wait=true, back to back or one batch `every` s (the next
    at once when one took longer). Each batch's time is how long until it is searchable."""
    headers = {"Authorization": f"Bearer {service.INDEX_KEY}"}
    chunks = retries = 0
    batch_ms: list[float] = []
    started = due = time.perf_counter()
    with httpx.Client(headers=headers, timeout=600) as client:
        for start in range(0, len(documents), batch):
            if every is not None:
                time.sleep(max(0.0, due - time.perf_counter()))
                due += every
            sent = time.perf_counter()
            made, again = _post_documents(client, base, documents[start : start + batch])
            batch_ms.append((time.perf_counter() - sent) * 1000)
            chunks, retries = chunks + made, retries + again
    seconds = time.perf_counter() - started
    return {
        "documents": len(documents),
        "chunks": chunks,
        "seconds": round(seconds, 1),
        "documents_per_s": round(len(documents) / seconds, 1),
        "chunks_per_s": round(chunks / seconds, 1),
        "retries": retries,
        "searchable_after_ms": summary(batch_ms),
    }


NOTEWORTHY = ("rebuil", "WARNING", "ERROR", "CRITICAL", "Traceback")


def service_log(log: Path, most: int = 60) -> list[str]:
    """The lines of the service's log worth reading beside the numbers: its rebuilds (with how
    long writes were held), warnings and errors."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return [line[:300] for line in lines if any(word in line for word in NOTEWORTHY)][:most]


def status(base: str) -> dict[str, Any]:
    keys = ("documents", "chunks", "pending", "hnsw_chunks", "unindexed_chunks")
    answer = httpx.get(f"{base}/api/v1/status", timeout=60).json()
    return {k: answer[k] for k in (*keys, "hnsw_rebuilds", "hnsw_rebuilding")}


def first_seconds(base: str, queries: list[str], seconds: float) -> dict[str, Any]:
    """Hybrid searches back to back from the moment /readyz answered: each second's p99 and
    max, and the whole window's. The client is made ready first (connected, this process's
    garbage collected and its objects frozen): the service's log gave the first search after
    a start 20.7 ms where this client, fresh, had measured 171.5 ms."""
    headers = {"Authorization": f"Bearer {service.BENCH_KEY}"}
    samples: list[tuple[float, float]] = []
    began = time.perf_counter()
    with httpx.Client(headers=headers, timeout=120) as client:
        client.get(f"{base}/healthz").raise_for_status()
        gc.collect()
        gc.freeze()
        for query in itertools.cycle(queries):
            started = time.perf_counter()
            if started - began >= seconds:
                break
            client.post(f"{base}/api/v1/search", json={"query": query}).raise_for_status()
            samples.append((started - began, (time.perf_counter() - started) * 1000))
    by_second: dict[int, list[float]] = {}
    for t, ms in samples:
        by_second.setdefault(int(t), []).append(ms)
    return {
        "seconds": seconds,
        "all": summary([ms for _, ms in samples]),
        "first_5_s": summary([ms for t, ms in samples if t < 5]),
        "per_second": [
            {"second": s, "p99": summary(v)["p99"], "max": summary(v)["max"], "count": len(v)}
            for s, v in sorted(by_second.items())
        ],
    }


def after_load(svc: service.Service, queries: list[str], args: Any) -> dict[str, Any]:
    """Right after the load, no restart: every scenario, throughput, status, memory."""
    return {
        "status": status(svc.base),
        "latency": service.latency(svc.base, queries, args.rounds),
        "throughput": service.throughput(svc.base, queries, args.clients, args.seconds),
        "memory": svc.memory_mib(),
    }


def merges(log: Path, since: int) -> list[dict[str, float | str]]:
    """The merges the service's log reports past byte `since`: generation, seconds taken."""
    with log.open("rb") as lines:
        lines.seek(since)
        text = lines.read().decode(errors="replace")
    return [
        {"shard": shard, "seconds": float(seconds)}
        for shard, seconds in re.findall(r"merged (shard-\d+) in ([\d.]+) s", text)
    ]


def wait_for_merge(svc: service.Service, loaded_at: float, since: int) -> dict[str, Any]:
    """Once the writes pause the service merges the segments its rebuilds left, by itself: how
    long after the last write that was done. A load that made no rebuild owes no merge (the
    smoke tier)."""
    if not status(svc.base)["hnsw_rebuilds"]:
        return {"merged": False, "why": "no rebuild during the load"}
    while not (done := merges(svc.log, since)):
        if time.perf_counter() - loaded_at > MERGE_WAIT_S:
            return {"merged": False, "why": f"no merge within {MERGE_WAIT_S:g} s"}
        time.sleep(1)
    waited = round(time.perf_counter() - loaded_at, 1)
    return {"merged": True, "after_last_write_s": waited, "merge": done[0]}


def after_merge(
    svc: service.Service, queries: list[str], args: Any, loaded_at: float, since: int
) -> dict[str, Any]:
    """The merge after the load (`wait_for_merge`), then after_load's measurements again."""
    merge = wait_for_merge(svc, loaded_at, since)
    return merge | after_load(svc, queries, args) if merge["merged"] else merge


def trickle(
    svc: service.Service, documents: list[Document], queries: list[str], rate: float
) -> dict[str, Any]:
    with Prober(svc.base, svc.process.pid, queries, interval=0.05) as prober:
        sent = send(svc.base, documents, TRICKLE_BATCH, every=TRICKLE_BATCH / rate)
    return {"rate_asked": rate, "sent": sent} | prober.result() | {"status": status(svc.base)}


def restart(data_dir: Path, queries: list[str], args: Any) -> dict[str, Any]:
    """`serve` with the local model on the data directory the live phases left."""
    with service.running_service(data_dir, wait_idle=False) as svc:
        result: dict[str, Any] = {"cold_start_s": round(svc.cold_start_s, 2)}
        result["first_seconds"] = first_seconds(svc.base, queries, args.first_seconds)
        result["status"] = status(svc.base)
        result["latency"] = service.latency(svc.base, queries, args.rounds)
        result["memory"] = svc.memory_mib()
    return result


def offline_twin(out: Path, data_dir: Path, queries: list[str], encoder: CachedEncoder) -> Any:
    """The index the live run left against its twin: the same points (the tier's, then the
    trickle's) written through the store layer and optimized offline (built once, kept in
    `live/twin`), both reopened here and timed query by query (bench.index.hnsw's probe)."""
    twin = out / "live" / "twin"
    if not (twin / "built").exists():
        shutil.rmtree(twin, ignore_errors=True)
        store = EdgeStore(twin, COLLECTION, facet_index=False)
        upsert_file(store, out)
        upsert_file(store, out, "trickle")
        store.optimize()
        store.close()
        (twin / "built").write_text("")
    points, vectors = read_peer_files(out)
    more, more_vectors = read_peer_files(out, "trickle")
    work = Workload(points + more, np.concatenate([vectors, more_vectors]), queries,
                    encoder.encode_array(queries))  # fmt: skip
    live = EdgeStore(data_dir, COLLECTION, facet_index=False)
    offline = EdgeStore(twin, COLLECTION, facet_index=False)
    try:
        result = probe({"live": Side(live), "offline": Side(offline)}, work)
    finally:
        live.close()
        offline.close()
    result["live"]["disk_mib"], result["offline"]["disk_mib"] = disk_mib(data_dir), disk_mib(twin)
    return result


def measure_live(
    root: Path, tier_name: str, args: Any, docs: dict[str, str], queries: list[str]
) -> dict[str, Any]:
    tier = TIERS[tier_name]
    encoder = model_encoder(root / "cache", hashing=args.smoke)
    result: dict[str, Any] = {"tier": tier_name, "mode": "live", "queries": len(queries)}
    out = tier_dir(root, tier_name)
    data_dir = live_data_dir(out)
    if tier.chunks > HTTP_LOAD_MAX:
        result["prepared"] = prepare(root, tier, docs, encoder).__dict__
    else:
        prepare_files(root, tier, docs, encoder)
        shutil.rmtree(data_dir, ignore_errors=True)
    (data_dir.parent / "serve.log").unlink(missing_ok=True)
    count = int(args.trickle_rate * args.trickle_seconds)
    new = trickle_documents(out, tier, docs, encoder, count)
    (out / "live.json").write_text(json.dumps({"encoder": encoder.name, "trickle": count}))
    tables = [
        write_stub_keys(out / "points.jsonl", out / "dense"),
        write_stub_keys(out / "trickle.jsonl", out / "trickle"),
    ]
    with (
        embed_stub(tables, hashing=args.smoke) as stub,
        # A prepared tier's trickle starts once the start's background work is done: the first
        # seconds after a start are the restart phase's to measure (first_seconds).
        service.running_service(
            data_dir,
            settings={"SEARCH_EMBEDDING_URL": stub.url},
            wait_idle=tier.chunks > HTTP_LOAD_MAX,
        ) as svc,
    ):
        result["start_s"] = round(svc.cold_start_s, 2)
        if tier.chunks <= HTTP_LOAD_MAX:
            documents = tier_documents(tier, docs)
            with Prober(svc.base, svc.process.pid, queries, interval=0.1) as prober:
                result["load"] = send(svc.base, documents, LOAD_BATCH) | prober.result()
            loaded_at, since = time.perf_counter(), svc.log.stat().st_size
            result["load"] |= {"stub": stub.stats(), "load_average": load_average()}
            result["after_load"] = after_load(svc, queries, args) | {"load_average": load_average()}
            result["after_merge"] = after_merge(svc, queries, args, loaded_at, since) | {
                "load_average": load_average()
            }
        result["trickle"] = trickle(svc, new, queries, args.trickle_rate)
        result["trickle"]["load_average"] = load_average()
        if tier.chunks > HTTP_LOAD_MAX:
            result["after_trickle"] = {
                "latency": service.latency(svc.base, queries, args.rounds),
                "memory": svc.memory_mib(),
            }
        result["stub"] = stub.stats()
        stopping = time.perf_counter()
    result["stop_s"] = round(time.perf_counter() - stopping, 2)
    result["restart"] = restart(data_dir, queries, args) | {"load_average": load_average()}
    result["disk_mib"] = disk_mib(data_dir)
    result["service_log"] = service_log(data_dir.parent / "serve.log")
    if args.offline_twin:
        result["offline_twin"] = offline_twin(out, data_dir, queries, encoder)
    return result


def headline(result: dict[str, Any]) -> dict[str, Any]:
    """The few numbers printed as a run goes."""
    line: dict[str, Any] = {"tier": result["tier"]}
    if "load" in result:
        line["load_chunks_per_s"] = result["load"]["chunks_per_s"]
        line["load_longest_search_ms"] = result["load"]["searches"].get("max")
    trickle_searches = result["trickle"]["searches"]
    line["trickle_p99_ms"] = trickle_searches.get("p99")
    line["restart_cold_start_s"] = result["restart"]["cold_start_s"]
    return line
