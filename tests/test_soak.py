"""Soak: the real `serve` (real model, embedded engine) under 60 s of mixed traffic at
concurrency 16 on loopback: searches with random filters, small ingests, gets and deletes.
Zero 5xx, zero lost documents; prints search p50/p99 alone and during the mixed traffic.
`pytest -m soak -s tests/test_soak.py` (SOAK_SECONDS to change the length)."""

import asyncio
import json
import os
import random
import signal
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import start_serve

KEY = "soak-index-key"
USERS = ["alice", "bob", "carol", "dave"]
GROUPS = ["eng", "ops"]
TAGS = ["urgent", "finance", "draft", "review", "infra"]
FOLDERS = ["/Projects", "/Projects/Reports", "/Archive", "/HR"]
WORDS = [
    "comet",
    "nebula",
    "budget",
    "quarterly",
    "report",
    "meeting",
    "roadmap",
    "security",
    "audit",
    "hiring",
    "plan",
    "invoice",
    "release",
    "notes",
    "backlog",
    "incident",
    "customer",
    "outage",
    "database",
    "migration",
    "design",
    "review",
]
CONCURRENCY = 16
MIXED_SECONDS = float(os.environ.get("SOAK_SECONDS", "60"))
ALONE_SECONDS = 20.0
SEED_DOCUMENTS = 200


def _keys() -> dict[str, Any]:
    keys: dict[str, Any] = {KEY: {"sub": "indexer", "scope": "index"}}
    for user in USERS:
        keys[f"soak-{user}"] = {"sub": user, "groups": GROUPS[: len(user) % 3], "scope": "search"}
    return keys


def _document(rng: random.Random, doc_id: str) -> dict[str, Any]:
    folder = rng.choice(FOLDERS)
    return {
        "doc_type": rng.choice(["file", "note"]),
        "doc_id": doc_id,
        "title": " ".join(rng.choices(WORDS, k=4)),
        "content": ". ".join(" ".join(rng.choices(WORDS, k=12)) for _ in range(rng.randint(1, 8))),
        "owner": rng.choice(USERS),
        "modified_at": rng.randint(1_700_000_000, 1_790_000_000),
        "file_path": f"{folder}/{doc_id}.md",
        "tags": rng.sample(TAGS, rng.randint(0, 3)),
        "acl": [f"group:{rng.choice(GROUPS)}"] if rng.random() < 0.5 else [],
    }


def _search_body(rng: random.Random) -> dict[str, Any]:
    body: dict[str, Any] = {
        "query": " ".join(rng.choices(WORDS, k=rng.randint(0, 3))),
        "limit": rng.choice([5, 10, 20]),
        "algorithm": rng.choice(["hybrid", "semantic", "bm25"]),
    }
    if rng.random() < 0.4:
        body["tags"] = rng.sample(TAGS, rng.randint(1, 2))
    if rng.random() < 0.3:
        body["path_prefixes"] = rng.sample(FOLDERS, rng.randint(1, 2))
    if rng.random() < 0.3:
        body["modified_after"] = rng.randint(1_700_000_000, 1_750_000_000)
    if rng.random() < 0.2:
        body["doc_types"] = [rng.choice(["file", "note"])]
    if rng.random() < 0.2:
        body["include_facets"] = True
    if rng.random() < 0.2:
        body["granularity"] = "document"
    return body


@dataclass
class Tally:
    statuses: Counter[str] = field(default_factory=Counter)
    search_ms: list[float] = field(default_factory=list)
    five_xx: list[str] = field(default_factory=list)
    alive: set[tuple[str, str]] = field(default_factory=set)  # accepted, not deleted
    deleted: set[tuple[str, str]] = field(default_factory=set)
    next_id: int = 0


def _percentiles(samples: list[float]) -> str:
    if len(samples) < 2:
        return "n/a"
    cuts = statistics.quantiles(samples, n=100)
    return f"p50 {cuts[49]:.0f} ms, p99 {cuts[98]:.0f} ms over {len(samples)} searches"


async def _one(client: httpx.AsyncClient, rng: random.Random, tally: Tally, mixed: bool) -> None:
    roll = rng.random() if mixed else 0.0
    user = rng.choice(USERS)
    if roll < 0.7:
        started = time.perf_counter()
        response = await client.post(
            "/api/v1/search",
            json=_search_body(rng),
            headers={"Authorization": f"Bearer soak-{user}"},
        )
        tally.search_ms.append((time.perf_counter() - started) * 1000)
        kind = "search"
    elif roll < 0.82:
        batch = []
        for _ in range(rng.randint(1, 4)):
            tally.next_id += 1
            batch.append(_document(rng, f"k{tally.next_id}"))
        response = await client.post("/api/v1/documents", json={"documents": batch})
        if response.status_code == 202:
            tally.alive.update((d["doc_type"], d["doc_id"]) for d in batch)
        kind = "ingest"
    elif roll < 0.92 and tally.alive:
        doc_type, doc_id = rng.choice(sorted(tally.alive))
        response = await client.get(f"/api/v1/documents/{doc_type}/{doc_id}")
        kind = "get"
    elif tally.alive:
        ref = rng.choice(sorted(tally.alive))
        tally.alive.discard(ref)  # before the await: no other task picks it meanwhile
        response = await client.delete(f"/api/v1/documents/{ref[0]}/{ref[1]}")
        if response.status_code == 204:
            tally.deleted.add(ref)
        else:
            tally.alive.add(ref)
        kind = "delete"
    else:
        return
    tally.statuses[f"{kind} {response.status_code}"] += 1
    if response.status_code >= 500:
        tally.five_xx.append(f"{kind} {response.status_code} {response.text[:200]}")


async def _drive(base: str, tally: Tally, seconds: float, mixed: bool) -> None:
    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as client:
        stop = time.monotonic() + seconds

        async def worker(seed: int) -> None:
            rng = random.Random(seed)
            while time.monotonic() < stop:
                await _one(client, rng, tally, mixed)

        await asyncio.gather(*(worker(seed) for seed in range(CONCURRENCY)))


@pytest.mark.soak
def test_soak(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(_keys()))
    process, base = start_serve(tmp_path / "data", keys)
    headers = {"Authorization": f"Bearer {KEY}"}
    try:
        rng = random.Random(7)
        seed = [_document(rng, f"seed{i}") for i in range(SEED_DOCUMENTS)]
        for start in range(0, len(seed), 50):
            response = httpx.post(
                f"{base}/api/v1/documents?wait=true",
                json={"documents": seed[start : start + 50]},
                headers=headers,
                timeout=600,
            )
            assert response.status_code == 200, response.text
        alone, mixed = Tally(), Tally()
        mixed.alive = {(d["doc_type"], d["doc_id"]) for d in seed}
        asyncio.run(_drive(base, alone, ALONE_SECONDS, mixed=False))
        asyncio.run(_drive(base, mixed, MIXED_SECONDS, mixed=True))
        deadline = time.monotonic() + 600
        while httpx.get(f"{base}/api/v1/status").json()["pending"] and time.monotonic() < deadline:
            time.sleep(1)
        status = httpx.get(f"{base}/api/v1/status").json()
        lost = [
            ref
            for ref in sorted(mixed.alive)
            if httpx.get(f"{base}/api/v1/documents/{ref[0]}/{ref[1]}", headers=headers)
            .json()
            .get("status")
            != "indexed"
        ]
        resurrected = [
            ref
            for ref in sorted(mixed.deleted)
            if httpx.get(f"{base}/api/v1/documents/{ref[0]}/{ref[1]}", headers=headers).status_code
            != 404
        ]
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    print(f"\nsoak: searches alone ({ALONE_SECONDS:.0f} s): {_percentiles(alone.search_ms)}")
    print(f"soak: searches during ingest ({MIXED_SECONDS:.0f} s): {_percentiles(mixed.search_ms)}")
    print(f"soak: requests {dict(sorted((alone.statuses + mixed.statuses).items()))}")
    print(
        f"soak: documents alive {len(mixed.alive)}, deleted {len(mixed.deleted)},"
        f" indexed {status['documents']}, failed {status['failed']}"
    )
    assert alone.five_xx + mixed.five_xx == []
    assert lost == [] and resurrected == []
    assert (status["documents"], status["pending"], status["failed"]) == (len(mixed.alive), 0, 0)
