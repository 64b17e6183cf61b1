"""The connector benchmark (`python -m bench.connector --smoke`) end to end on 30 files with
hashing vectors, so that it cannot rot; and what it measures holds where it must: a tick when
nothing changed is one request, a change deep in the tree is listed down its path only and read
once, a new file becomes searchable (by webhook and by polling)."""

from pathlib import Path

from bench.connector.run import main


def test_connector_benchmark_runs_end_to_end(tmp_path: Path) -> None:
    result = main(["--smoke", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "out")])
    assert (tmp_path / "out" / "connector-smoke.json").exists()
    full = result["full"]
    first = full["first_index"]
    assert first["indexed_documents"] == first["files"] == 30
    assert first["downloads"] == 30  # each file read once
    assert all(line["state"] == "ok" for line in first["users"].values())
    assert first["memory"]["peak_rss_mib"] > 0 and first["cpu_s_by_role"]["serve"] > 0

    idle = full["idle_ticks"]
    assert idle["ticks"] >= 3
    assert idle["requests_per_tick"] == {1: idle["ticks"]}  # one PROPFIND Depth 0 each
    assert idle["request_kinds"] == {"PROPFIND Depth 0": idle["ticks"]}

    (edit,) = full["deep_edit_poll"]["runs"]
    kinds = edit["requests"]["by_kind"]
    assert kinds["GET file"] == 1  # the edited file only
    assert kinds["PROPFIND Depth 0"] == 1
    assert kinds["PROPFIND Depth 1"] == 9  # the root and the 8 folders above the file
    assert edit["requests"]["total"] <= 9 + 2  # depth + 2
    assert edit["searchable_s"] <= result["settings"]["interval_s"] + 5

    (new,) = full["new_file_webhook"]["runs"]
    assert new["searchable_s"] < 10
    assert full["search"]["idle"]["count"] > 0 and full["search"]["errors"]["count"] == 0
