"""The users' corpus (bench.harness.users_corpus) has the shape the issue measured from outside,
and its live benchmark runs end to end on a tiny version of it."""

import json
import statistics
from pathlib import Path

import pytest

from bench.harness.corpus import BENCH_GROUP, BENCH_USER, DATASET, load_vaswani
from bench.harness.users_corpus import users_corpus, users_scenarios
from bench.index.users import top_functions
from bench.run import main

pytestmark = pytest.mark.skipif(
    not DATASET.exists(), reason="the Vaswani collection is not beside the repo"
)


def test_the_users_corpus_is_short_documents_partly_visible_with_repeated_queries() -> None:
    docs, _, _ = load_vaswani()
    corpus = users_corpus(docs, 20_000)
    documents = corpus.documents
    assert len({d.content for d in documents}) == len(documents) == 20_000
    assert 15 <= statistics.mean(len(d.content.split()) for d in documents) <= 17
    visible = sum(
        d.owner == BENCH_USER or f"group:{BENCH_GROUP}" in d.acl for d in documents
    ) / len(documents)
    assert 0.35 <= visible <= 0.40
    assert len({d.owner for d in documents}) == 4
    folders = {d.file_path.rsplit("/", 1)[0] for d in documents if d.file_path}
    assert len(folders) == 1000 and len({f.split("/")[1] for f in folders}) == 100
    tagged = sum("tag03" in d.tags for d in documents) / len(documents)
    assert 0.07 <= tagged <= 0.13
    assert all(len(q.split()) == 6 for q in corpus.queries)


def test_the_profile_summary_counts_self_and_inclusive_samples(tmp_path: Path) -> None:
    stacks = tmp_path / "http.txt"
    stacks.write_text(
        "main (app/a.py:1);search (app/b.py:2);encode (app/c.py:3) 6\n"
        "main (app/a.py:1);search (app/b.py:2) 2\n"
        "main (app/a.py:1);dumps (json/x.py:9) 2\n"
    )
    summary = top_functions(stacks)
    assert summary["samples"] == 10
    own = {row["function"]: row["share"] for row in summary["self"]}
    assert own == {"encode (c.py:3)": 0.6, "search (b.py:2)": 0.2, "dumps (x.py:9)": 0.2}
    inclusive = {row["function"]: row["share"] for row in summary["inclusive"]}
    assert inclusive["main (a.py:1)"] == 1.0 and inclusive["search (b.py:2)"] == 0.8


def test_the_users_live_benchmark_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "out"
    smoke = ["--live", "--corpus", "users", "--smoke", "--data", str(tmp_path), "--out", str(out)]
    main(smoke)
    result = json.loads((out / "live-users-smoke.json").read_text())
    load = result["load"]
    assert load["documents"] == 300 and load["errors"] == 0
    assert load["stub"]["table"] == 300  # every document's vector from the corpus's table
    for phase in (result["after_load"], result["restart"]):
        assert phase["status"]["chunks"] == 300
        assert set(phase["latency"]) == set(users_scenarios())
        for level in phase["throughput"]:
            assert level["errors"] == 0 and level["searches"] > 0
            assert level["cpu_ms_per_search"]["http"] > 0
            assert level["cpu_ms_per_search"]["engine"] > 0
            # The engine's search pool, and the rest. On 300 documents the pool may use less
            # than the one tick (10 ms) /proc counts in, so its threads are checked found, and
            # the split checked to add up to the engine's CPU.
            split = level["engine_cpu_ms_per_search"]
            assert split["search_pool_threads"] > 0
            assert split["search_pool"] >= 0 and split["calls"] > 0
            engine = level["cpu_ms_per_search"]["engine"]
            assert abs(split["search_pool"] + split["calls"] - engine) <= 0.011
    assert result["restart"]["first_seconds"]["all"]["count"] > 0

    # Side by side: this checkout as its own baseline, both served at once, slices alternated.
    repo = Path(__file__).resolve().parents[2]
    main([*smoke, "--reuse", "--baseline", str(repo), "--side-by-side", "2"])
    compared = json.loads((out / "live-users-smoke.json").read_text())["compare"]
    for side in ("baseline", "current"):
        run = compared[side]
        assert len(run["slices"]) == 2 and run["searches"] == sum(
            s["searches"] for s in run["slices"]
        )
        assert run["cpu_ms_per_search"]["all"] > 0 and run["engine_cpu_ms_per_search"]["calls"] > 0
