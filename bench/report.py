"""Render bench/results/*.json into docs/benchmarks.md (between the results markers) and the
PNG plots under docs/img/. Medians over the service restarts of a run. `--live`: only the live
section (bench/results/live-*.json, between the live markers).

    .venv/bin/python -m bench.report [--live]"""

import json
import statistics
from typing import Any

from bench.harness.results import DOCS, RESULTS, replace_between
from bench.harness.service import scenarios

DOC = DOCS / "benchmarks.md"
IMG = DOCS / "img"
START, END = "<!-- results:start -->", "<!-- results:end -->"
LIVE_START, LIVE_END = "<!-- live:start -->", "<!-- live:end -->"
TIERS = ("11k", "100k", "300k")
LIVE_TIERS = ("100k", "300k", "1m")
# Issue 16's table, measured from outside on main before the live index (100k over HTTP):
# p50 / p95 / p99 ms right after the load, and in the first ~20 s after a restart.
BEFORE_LIVE = {
    "hybrid, access rule only": ("49 / 60 / 63", "29 / 213 / 247"),
    "semantic": ("38 / 45 / 58", "28 / 33 / 39"),
    "hybrid, granularity=document": ("45 / 64 / 70", "31 / 40 / 42"),
    "hybrid + facets": ("57 / 63 / 65", "35 / 46 / 61"),
    "hybrid, ~5 % (category)": ("18 / 23 / 32", "13 / 16 / 24"),  # the 5 % tag filter
    "browse (no query)": ("-", "-"),
}
BEFORE_THROUGHPUT = "45 / 61 / 70"
BEFORE_READY_S = "5.2"
LIVE_TARGETS = {
    "hybrid, access rule only": "p50 ≤ 15, p99 ≤ 40",
    "semantic": "p50 ≤ 12",
    "hybrid, granularity=document": "p50 ≤ 15",
    "hybrid + facets": "p50 ≤ 25",
    "hybrid, ~5 % (category)": "",
    "browse (no query)": "p50 ≤ 5",
}


def load(tiers: tuple[str, ...] = TIERS, prefix: str = "") -> dict[str, dict[str, Any]]:
    """The results of each tier measured (`prefix`: `live-` for the live runs)."""
    found = {}
    for tier in tiers:
        path = RESULTS / f"{prefix}{tier}.json"
        if path.exists():
            found[tier] = json.loads(path.read_text())
    return found


def median_of(runs: list[dict[str, Any]], *keys: str) -> float:
    values = []
    for run in runs:
        value: Any = run
        for key in keys:
            value = value[key]
        values.append(float(value))
    return round(statistics.median(values), 1)


def headline_table(results: dict[str, dict[str, Any]]) -> list[str]:
    """The issue's table: each figure at every tier measured, and the target at 100k."""
    tiers = list(results)

    def p50(tier: str, name: str, key: str = "p50") -> str:
        return f"{median_of(results[tier]['runs'], 'latency', name, key):g}"

    def row(label: str, target: str, cell: Any) -> str:
        return f"| {label} | " + " | ".join(cell(t) for t in tiers) + f" | {target} |"

    filters = [n for n in scenarios() if n.startswith("hybrid, ") and "%" in n]

    def throughput(tier: str) -> str:
        runs = results[tier]["runs"]
        levels = range(len(runs[0]["throughput"]))
        per_s = [
            statistics.median(r["throughput"][i]["searches_per_s"] for r in runs) for i in levels
        ]
        errors = sum(level["errors"] for r in runs for level in r["throughput"])
        return " / ".join(f"{v:g}" for v in per_s) + f" ({errors} errors)"

    lines = [
        "| what | " + " | ".join(tiers) + " | target at 100k |",
        "|---|" + "---|" * (len(tiers) + 1),
        row("hybrid, access rule only, p50 / p99 ms", "≤ 15 / ≤ 50",
            lambda t: f"{p50(t, 'hybrid, access rule only')} / "
            f"{p50(t, 'hybrid, access rule only', 'p99')}"),
        row("hybrid with a filter (50 % / 5 % / one folder / tags_all + dates), p50 ms", "≤ 12",
            lambda t: " / ".join(p50(t, n) for n in filters)),
        row("semantic / bm25 / browse, p50 ms", "≤ 12 / 8 / 10",
            lambda t: " / ".join(p50(t, n) for n in ("semantic", "bm25", "browse (no query)"))),
        row("granularity=document, p50 ms", "≤ 15",
            lambda t: p50(t, "hybrid, granularity=document")),
        row("hybrid + facets, p50 ms", "≤ 30", lambda t: p50(t, "hybrid + facets")),
        row("searches/s at 1 / 4 / 16 clients", "≥ 100 at 16, 0 errors", throughput),
        row("query embedding inside the service, p50 ms", "≤ 5",
            lambda t: p50(t, "hybrid, access rule only", "embed_p50")),
        row("cold start, serve → /readyz 200, s", "≤ 3",
            lambda t: f"{median_of(results[t]['runs'], 'cold_start_s'):g}"),
    ]  # fmt: skip
    return lines


def latency_table(results: dict[str, dict[str, Any]]) -> list[str]:
    tiers = list(results)
    head = "| scenario | " + " | ".join(f"{t}: p50 / p95 / p99 (embed + search)" for t in tiers)
    lines = [head + " |", "|---|" + "---|" * len(tiers)]
    for name in scenarios():
        cells = []
        for tier in tiers:
            runs = results[tier]["runs"]
            p50, p95, p99 = (median_of(runs, "latency", name, k) for k in ("p50", "p95", "p99"))
            embed = median_of(runs, "latency", name, "embed_p50")
            search = median_of(runs, "latency", name, "search_p50")
            cells.append(f"{p50} / {p95} / {p99} ({embed} + {search})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def throughput_table(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| tier | clients | searches/s | p50 ms | p99 ms | errors |",
        "|---|---|---|---|---|---|",
    ]
    for tier, result in results.items():
        runs = result["runs"]
        for i, level in enumerate(runs[0]["throughput"]):
            values = [run["throughput"][i] for run in runs]
            lines.append(
                f"| {tier} | {level['clients']} "
                f"| {statistics.median(v['searches_per_s'] for v in values):.1f} "
                f"| {statistics.median(v['p50_ms'] for v in values):.1f} "
                f"| {statistics.median(v['p99_ms'] for v in values):.1f} "
                f"| {sum(v['errors'] for v in values)} |"
            )
    return lines


def footprint_table(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| tier | points | load through the store layer | HNSW build after it (as `ingest`)"
        " | cold start to /readyz | background loads done | RSS after the run | disk"
        " | disk per 100k chunks |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for tier, result in results.items():
        prepared, runs = result["prepared"], result["runs"]
        per_100k = result["disk_mib"] / prepared["points"] * 100_000
        optimize = prepared.get("optimize_seconds")
        settled = f"{median_of(runs, 'settled_s')} s" if "settled_s" in runs[0] else "-"
        lines.append(
            f"| {tier} | {prepared['points']:,} | {prepared['upsert_points_per_s']:,} points/s "
            f"| {'-' if optimize is None else f'{optimize} s'} "
            f"| {median_of(runs, 'cold_start_s')} s | {settled} "
            f"| {median_of(runs, 'rss_mib')} MiB | {result['disk_mib']} MiB | {per_100k:.0f} MiB |"
        )
    return lines


def ingest_line() -> list[str]:
    path = RESULTS / "ingest.json"
    if not path.exists():
        return []
    rate = json.loads(path.read_text())
    return [
        f"Ingest (`bench.index.embedding`'s functions: accept + index batches into a fresh store):"
        f" {rate['service_chunks_per_s']} chunks/s against {rate['model_chunks_per_s']} chunks/s"
        f" for the model alone on the same {rate['chunks']} full chunks"
        f" ({rate['ratio']:.0%} of the model's rate).",
    ]


def quality_table(results: dict[str, dict[str, Any]]) -> list[str]:
    quality = results.get("11k", {}).get("quality")
    if not quality:
        return []
    lines = ["| algorithm | nDCG@10 | recall@100 |", "|---|---|---|"]
    lines += [f"| {n} | {q['ndcg@10']:.3f} | {q['recall@100']:.3f} |" for n, q in quality.items()]
    return lines


def peers_table(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| tier | scenario | engine | engine p50 ms | x ours, engine side | x ours, end to end"
        " | dense recall@10 | filter violations | short pages |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for tier, result in results.items():
        engines = result.get("peers", {})
        ours = engines.get("ours", {}).get("scenarios", {})
        for engine in engines.values():
            if "scenarios" not in engine:
                lines.append(f"| {tier} | | {engine.get('engine')} | failed | | | | | |")
                continue
            for name, row in engine["scenarios"].items():
                http = median_of(result["runs"], "latency", name, "p50")
                mine = ours.get(name, row)["p50"]
                engine_x = row["p50"] / mine
                end_x = (http - mine + row["p50"]) / http  # our service with this engine
                lines.append(
                    f"| {tier} | {name} | {engine['engine']} | {row['p50']} | {engine_x:.2f}"
                    f" | {end_x:.2f} | {row['dense_recall@10']} | {row['violations']}"
                    f" | {row['short_pages']} |"
                )
    builds = [
        f"{engine['engine']} {engine['build_s']} s ({tier})"
        for tier, result in results.items()
        for engine in result.get("peers", {}).values()
        if engine.get("build_s") is not None
    ]
    if builds:
        lines += ["", "Peer index builds (once per tier, kept between runs): " + ", ".join(builds)]
    return lines


def depth_table() -> list[str]:
    path = RESULTS / "depth.json"
    if not path.exists():
        return []
    sweep = json.loads(path.read_text())
    lines = [
        f"Candidate depth (`BASE_DEPTH`, shipped: {sweep['shipped_depth']}), in process on the"
        " 11k tier (`bench.quality.depth`): first-page nDCG@10, recall@100 (one hit per document),"
        " queries (of 93) whose five pages of 10 differ from one request for 50, search ms p50.",
        "",
        "| depth | algorithm | nDCG@10 | recall@100 | paging differs | search ms p50 |",
        "|---|---|---|---|---|---|",
    ]
    for depth, rows in sweep["depths"].items():
        for name, row in rows.items():
            lines.append(
                f"| {depth} | {name} | {row['ndcg@10']:.4f} | {row['recall@100']:.4f}"
                f" | {row['queries_paging_differently']} | {row['search_ms_p50']} |"
            )
    return lines


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def hnsw_table() -> list[str]:
    lines = []
    for tier in TIERS:
        path = RESULTS / f"hnsw-{tier}.json"
        if not path.exists():
            continue
        steps = json.loads(path.read_text())
        lines += [
            f"**{tier}** (`bench.index.hnsw --tier {tier}`, {steps['points']:,} points,"
            f" {steps['queries']} queries, sides interleaved query by query): load"
            f" {steps['load_s']} s; `optimize()` {steps['optimize_s']} s with the GIL held for up"
            f" to {steps['optimize_longest_gil_hold_s']} s at a stretch; opening the shard holds"
            f" it {steps['plain_load_gil_hold_s']} s plain, {steps['optimized_load_gil_hold_s']} s"
            f" optimized; disk {steps['disk_mib_plain']} MiB plain,"
            f" {steps['disk_mib_optimized']} MiB optimized.",
            "",
            "| state | segments | scenario (matching points) | hybrid p50 ms | dense k=10 p50 ms"
            " | dense k=100 p50 ms | recall@10 | recall@100 |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for probe in (steps["bulk load vs reopen"], steps["plain vs optimized"]):
            for state, rows in probe.items():
                segments = rows["store"]["segments"]
                for scenario, row in rows.items():
                    if scenario == "store":
                        continue
                    lines.append(
                        f"| {state} | {segments} | {scenario} ({row['matching_points']:,})"
                        f" | {_ms(row.get('hybrid_ms'))} | {_ms(row['dense10_ms'])}"
                        f" | {_ms(row['dense100_ms'])} | {row['recall@10']} | {row['recall@100']} |"
                    )
        lines.append("")
    return lines


def plots(results: dict[str, dict[str, Any]]) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(plots need `pip install -e '.[bench]'`)"]
    IMG.mkdir(parents=True, exist_ok=True)
    sizes = [results[t]["prepared"]["points"] for t in results]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name in scenarios():
        ax.plot(sizes, [median_of(results[t]["runs"], "latency", name, "p50") for t in results],
                marker="o", label=name)  # fmt: skip
    ax.set(xscale="log", xlabel="chunks", ylabel="p50 over HTTP, ms", title="Latency vs size")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(IMG / "latency-vs-size.png", dpi=110)
    fig, ax = plt.subplots(figsize=(6, 4))
    for tier, result in results.items():
        levels = result["runs"][0]["throughput"]
        ax.plot([lv["clients"] for lv in levels],
                [statistics.median(r["throughput"][i]["searches_per_s"] for r in result["runs"])
                 for i in range(len(levels))], marker="o", label=tier)  # fmt: skip
    ax.set(xscale="log", xlabel="concurrent clients", ylabel="searches/s", title="Throughput")
    ax.legend()
    fig.tight_layout()
    fig.savefig(IMG / "throughput.png", dpi=110)
    written = ["![latency vs size](img/latency-vs-size.png)", "![throughput](img/throughput.png)"]
    quality = results.get("11k", {}).get("quality")
    if quality:
        fig, ax = plt.subplots(figsize=(6, 4))
        names = list(quality)
        ax.bar([n + "\nnDCG@10" for n in names], [quality[n]["ndcg@10"] for n in names])
        ax.set(ylabel="nDCG@10", title="Quality on Vaswani, over HTTP")
        fig.tight_layout()
        fig.savefig(IMG / "quality.png", dpi=110)
        written.append("![quality](img/quality.png)")
    plt.close("all")
    return written


def render() -> str:
    results = load()
    first = next(iter(results.values()))
    machine = first["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items())
    parts = [
        f"Run of {machine['date']}: Python {machine['python']}, {machine['cpus']} CPUs,"
        f" {versions}.",
        "",
        "### Against the targets (issue 8)",
        "",
        *headline_table(results),
        "",
        "### Latency over HTTP, ms (median of the restarts' p50 / p95 / p99; the server's own"
        " embed + search split in brackets)",
        "",
        *latency_table(results),
        "",
        "### Throughput (hybrid, access rule only, bounded async clients on loopback)",
        "",
        *throughput_table(results),
        "",
        "### Start, memory, disk",
        "",
        *footprint_table(results),
        "",
        *ingest_line(),
        "",
        "### Quality on Vaswani over HTTP (one hit per document, a user who sees everything)",
        "",
        *quality_table(results),
        "",
        *depth_table(),
        "",
        "### Plain segments vs HNSW, and the state after a bulk load (engine side, in process)",
        "",
        *hnsw_table(),
        "### Peers on the same points, vectors and filters (ratios > 1: slower than ours)",
        "",
        *peers_table(results),
        "",
        *plots(results),
    ]
    return "\n".join(parts)


def _ppp(row: dict[str, Any]) -> str:
    return f"{row['p50']:g} / {row['p95']:g} / {row['p99']:g}"


def _load_average(result: dict[str, Any], phase: str) -> str:
    return " / ".join(f"{x:g}" for x in result.get(phase, {}).get("load_average", [])) or "-"


def live_table(result: dict[str, Any]) -> list[str]:
    """Issue 16's table: its numbers before (on main), ours after, for one HTTP-loaded tier."""
    loaded, restarted = result["after_load"], result["restart"]
    merged = result.get("after_merge", {})
    merge = merged.get("merge", {})
    lines = [
        "| case (p50 / p95 / p99 ms) | before (main): right after the HTTP load | after: right"
        " after the HTTP load | after: once it merged, no command"
        f" ({merged.get('after_last_write_s', '-')} s after the last write; the merge took"
        f" {merge.get('seconds', '-')} s) | before (main): after a restart | after: after a"
        " restart | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (before_load, before_restart) in BEFORE_LIVE.items():
        after = _ppp(merged["latency"][name]) if "latency" in merged else "-"
        lines.append(
            f"| {name} | {before_load} | **{_ppp(loaded['latency'][name])}** | **{after}**"
            f" | {before_restart} | **{_ppp(restarted['latency'][name])}**"
            f" | {LIVE_TARGETS[name]} |"
        )
    lines += [
        f"| searches/s at 1 / 4 / 16 clients | {BEFORE_THROUGHPUT} | **{_per_s(loaded)}**"
        f" | **{_per_s(merged)}** | - | - | ≥ 130 at 16, 0 errors |",
        f"| `serve` → `/readyz`, s | - | {result['start_s']:g} (empty) | - | {BEFORE_READY_S}"
        f" | **{restarted['cold_start_s']:g}** | ≤ 2 |",
        "",
        f"Load averages (1 / 5 / 15 min) at the end of each phase: load"
        f" {_load_average(result, 'load')}, after the load {_load_average(result, 'after_load')},"
        f" after the merge {_load_average(result, 'after_merge')},"
        f" restart {_load_average(result, 'restart')}.",
    ]
    return lines


def _per_s(phase: dict[str, Any]) -> str:
    if "throughput" not in phase:
        return "-"
    levels = phase["throughput"]
    per_s = " / ".join(f"{lv['searches_per_s']:g}" for lv in levels)
    return f"{per_s} ({sum(lv['errors'] for lv in levels)} errors)"


def _searches(row: dict[str, Any]) -> str:
    s = row["searches"]
    return f"{_ppp(s)} (longest {s['max']:g}, {s['count']} searches, {row['errors']} errors)"


def live_phases(results: dict[str, dict[str, Any]]) -> list[str]:
    """The load, trickle, restart and memory rows of every live tier."""
    tiers = list(results)
    lines = ["| what | " + " | ".join(tiers) + " | target |", "|---|" + "---|" * (len(tiers) + 1)]

    def row(label: str, target: str, cell: Any) -> None:
        cells = []
        for tier in tiers:
            try:
                cells.append(str(cell(results[tier])))
            except KeyError:
                cells.append("-")
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {target} |")

    row(
        "load over HTTP: documents, chunks/s (batches of 256, `?wait=true`)",
        "",
        lambda r: f"{r['load']['documents']:,}, {r['load']['chunks_per_s']:g}",
    )
    row(
        "searches during the load, ms p50 / p95 / p99 (longest)",
        "longest ≤ 250",
        lambda r: _searches(r["load"]),
    )
    row(
        "searches during the load while a rebuild ran / while none did, p50 / p99 (longest)",
        "",
        lambda r: " / ".join(
            "{p50:g} / {p99:g} ({max:g}, {count} searches)".format(**split)
            if split["count"]
            else "none"
            for split in r["load"]["searches_by_rebuild"].values()
        ),
    )
    row(
        "searches slower than 100 ms during the load / the trickle",
        "",
        lambda r: f"{r['load']['slow_searches']} / {r['trickle']['slow_searches']}",
    )
    row(
        "HNSW after the load: indexed / outside / rebuilds",
        "",
        lambda r: "{hnsw_chunks:,} / {unindexed_chunks:,} / {hnsw_rebuilds}".format(
            **r["after_load"]["status"]
        ),
    )
    row(
        "trickle: documents/s asked, sent",
        "50",
        lambda r: f"{r['trickle']['rate_asked']:g}, {r['trickle']['sent']['documents_per_s']:g}",
    )
    row(
        "trickle: searchable after, ms p50 / p99 (batches of 10)",
        "",
        lambda r: "{p50:g} / {p99:g}".format(**r["trickle"]["sent"]["searchable_after_ms"]),
    )
    row(
        "searches during the trickle, ms p50 / p95 / p99 (longest)",
        "p99 ≤ 50, longest ≤ 250",
        lambda r: _searches(r["trickle"]),
    )
    row(
        "after the trickle, no restart (1M): hybrid / with facets, p50 ms",
        "≤ 30 / ≤ 50",
        lambda r: (
            f"{r['after_trickle']['latency']['hybrid, access rule only']['p50']:g} / "
            f"{r['after_trickle']['latency']['hybrid + facets']['p50']:g}"
        ),
    )
    row(
        "restart: `serve` → `/readyz`, s",
        "≤ 2 (100k), ≤ 5 (1M)",
        lambda r: f"{r['restart']['cold_start_s']:g}",
    )
    row(
        "restart: searches in the first second after `/readyz`, p99 / longest ms",
        "p99 ≤ 40",
        lambda r: "{p99:g} / {max:g}".format(**r["restart"]["first_seconds"]["per_second"][0]),
    )
    row(
        "restart: searches in the first 5 s, ms p50 / p95 / p99 (longest)",
        "p99 ≤ 40",
        lambda r: "{p50:g} / {p95:g} / {p99:g} ({max:g})".format(
            **r["restart"]["first_seconds"]["first_5_s"]
        ),
    )
    row(
        "restart: hybrid / with facets, p50 ms",
        "1M: ≤ 30 / ≤ 50",
        lambda r: (
            f"{r['restart']['latency']['hybrid, access rule only']['p50']:g} / "
            f"{r['restart']['latency']['hybrid + facets']['p50']:g}"
        ),
    )
    row(
        "the live index against the same points optimized offline (`--offline-twin`; engine"
        " side, interleaved, access rule only): hybrid ms, dense k=10 ms, recall@10, segments,"
        " disk MiB",
        "",
        lambda r: _twin(r["offline_twin"]),
    )
    row(
        "RSS after the load (1M: after the trickle): http + engine = all, MiB",
        "",
        lambda r: _memory(r.get("after_load", r.get("after_trickle", {}))["memory"]),
    )
    row(
        "RSS, peak of all processes sampled each second during the load / trickle, MiB",
        "",
        lambda r: f"{r.get('load', {}).get('peak_rss_mib', '-')} / {r['trickle']['peak_rss_mib']}",
    )
    row(
        "RSS after the restart: http + engine = all, MiB",
        "",
        lambda r: _memory(r["restart"]["memory"]),
    )
    row("disk, MiB", "", lambda r: f"{r['disk_mib']:,}")
    return lines  # fmt: skip


def _twin(twin: dict[str, Any]) -> str:
    def side(name: str) -> str:
        row, store = twin[name]["hybrid, access rule only"], twin[name]["store"]
        return (
            f"{name} {row['hybrid_ms']:g}, {row['dense10_ms']:g}, {row['recall@10']:g},"
            f" {store['segments']}, {twin[name]['disk_mib']:g}"
        )

    return f"{side('live')}; {side('offline')}"


def _memory(memory: dict[str, Any]) -> str:
    roles = memory["by_role"]
    parts = " + ".join(f"{roles[r]['rss_mib']:g} ({r})" for r in roles)
    return f"{parts} = {memory['rss_mib']:g}"


def live_peers(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| tier | engine | ingest, points/s | scenario | engine p50 ms | x ours, engine side"
        " | x ours, end to end | dense recall@10 | filter violations | short pages |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for tier, result in results.items():
        for engine in result.get("peers", {}).values():
            if "scenarios" not in engine:
                lines.append(f"| {tier} | {engine.get('engine')} | failed | | | | | | | |")
                continue
            rate = _ingest_rate(engine)
            for name, row in engine["scenarios"].items():
                lines.append(
                    f"| {tier} | {engine['engine']} | {rate}"
                    f" | {name} | {row['p50']:g} | {row.get('engine_ratio', 1.0):g}"
                    f" | {row.get('end_to_end_ratio', 1.0):g} | {row['dense_recall@10']:g}"
                    f" | {row['violations']} | {row['short_pages']} |"
                )
    finished = [
        f"{engine['engine']} ({tier}) {' / '.join(f'{x:g}' for x in engine['load_average'])}"
        for tier, result in results.items()
        for engine in result.get("peers", {}).values()
        if "load_average" in engine
    ]
    if finished:
        lines += [
            "",
            "Load averages when each engine's measurement finished: " + "; ".join(finished),
        ]
    return lines


def _ingest_rate(engine: dict[str, Any]) -> str:
    """Points a second over the whole feed; with a bulk load first, the batches' rate too."""
    rate, live = engine.get("ingest_points_per_s"), engine.get("live_points_per_s")
    if rate is None:
        return "-"
    if not engine.get("bulk_points"):
        return f"{rate:,}"
    batches = "-" if live is None else f"{live:,}"
    return f"{rate:,} (bulk {engine['bulk_points']:,}, then {batches} live)"


def render_live() -> str:
    results = load(LIVE_TIERS, "live-")
    if not results:
        return "(no live run: `python -m bench.run --live`)"
    parts = []
    for tier, result in results.items():
        if "after_load" not in result:
            continue
        machine = result["machine"]
        parts += [
            f"### Issue 16's table at {tier}: before and after (run of {machine['date']},"
            f" {machine['cpus']} CPUs)",
            "",
            *live_table(result),
            "",
        ]
    parts += [
        "### Load, trickle, restart, memory",
        "",
        *live_phases(results),
        "",
        "### Peers on the live path (fed 256 points at a time; ratios > 1: slower than ours)",
        "",
        *live_peers(results),
    ]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.report")
    parser.add_argument("--live", action="store_true", help="only the live section")
    args = parser.parse_args(argv)
    text = DOC.read_text()
    if not args.live:
        text = replace_between(text, START, END, render())
    if LIVE_START in text:
        text = replace_between(text, LIVE_START, LIVE_END, render_live())
    DOC.write_text(text)
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
