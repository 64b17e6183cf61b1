"""The speed benchmark's harness, run end to end on a tiny corpus so that it cannot rot: the
real service on a loopback port, every scenario, the load generator, quality over HTTP."""

import json
from pathlib import Path

import pytest

from bench.corpus import DATASET
from bench.run import main
from bench.service import scenarios


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


@pytest.mark.skipif(not DATASET.exists(), reason="the Vaswani collection is not beside the repo")
def test_quality_benchmark_runs_end_to_end(tmp_path: Path) -> None:
    from bench.quality import main as quality

    out = tmp_path / "quality.json"
    quality(["--smoke", "--data", str(tmp_path / "data"), "--out", str(out), "--no-report"])
    result = json.loads(out.read_text())
    for collection in ("vaswani", "long"):
        rows = result[collection]["variants"]
        assert len(rows) == 10  # 5 algorithms and fusions, each with and without feedback
        for name, row in rows.items():
            assert 0 <= row["ndcg@10"] <= 1 and row["p50_ms"] > 0, name
            tuned = name.startswith("hybrid")
            assert (row["cv"] is not None) == tuned, name
            if tuned:
                assert len(row["cv"]["chosen"]) == 5 and 0 <= row["cv"]["ndcg@10"] <= 1
