"""Render bench/results/quality.json into docs/benchmarks.md (between the quality markers) and
docs/img/quality-latency.png (nDCG@10 against p50 latency), and bench/results/levers.json
(between the levers markers).

    .venv/bin/python -m bench.quality.report"""

import json
import sys
from typing import Any

from bench.harness import results

RESULTS = results.RESULTS / "quality.json"
DOC = results.DOCS / "benchmarks.md"
PLOT = results.DOCS / "img" / "quality-latency.png"
LEVERS = results.RESULTS / "levers.json"
START, END = "<!-- quality:start -->", "<!-- quality:end -->"
LEVERS_START, LEVERS_END = "<!-- levers:start -->", "<!-- levers:end -->"
TITLES = {
    "vaswani": "Vaswani (11,429 abstracts, ~42 words)",
    "long": "Longer documents (6 Vaswani abstracts each, ~250 words, 1-3 chunks)",
}


def _cv(row: dict[str, Any]) -> str:
    cv = row["cv"]
    if cv is None:
        return "- | -"
    return f"{cv['ndcg@10']:.3f} | {cv['recall@100']:.3f}"


def _chosen(row: dict[str, Any]) -> str:
    cv = row["cv"]
    if cv is None:
        return "(nothing to tune)"
    counts: dict[str, int] = {}
    for setting in cv["chosen"]:
        counts[setting] = counts.get(setting, 0) + 1
    return ", ".join(f"{s} x{n}" for s, n in sorted(counts.items(), key=lambda i: -i[1]))


def table(name: str, measured: dict[str, Any]) -> list[str]:
    lines = [
        f"**{TITLES.get(name, name)}**: {measured['queries']} queries, load average"
        f" {measured['load_average']} (1 / 5 / 15 min, start -> end)",
        "",
        "| variant | default setting | nDCG@10 | R@100 | held-out nDCG@10 | held-out R@100"
        " | settings the folds chose | p50 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for variant, row in measured["variants"].items():
        lines.append(
            f"| {variant} | {row['default'] or '-'} | {row['ndcg@10']:.3f} |"
            f" {row['recall@100']:.3f} | {_cv(row)} | {_chosen(row)} | {row['p50_ms']:g} |"
        )
    return [*lines, ""]


def defaults_table(defaults: dict[str, Any]) -> list[str]:
    """The defaults the service ships (app/search/fusion_defaults.json), as this run chose them."""
    lines = [
        f"**Defaults chosen** ({defaults['chosen_by']}), written to"
        " `app/search/fusion_defaults.json`:",
        "",
        "| fusion | dense_weight | held-out nDCG@10 Vaswani / longer | nDCG@10 at it, Vaswani /"
        " longer | weights the folds chose |",
        "|---|---|---|---|---|",
    ]
    for fusion, row in defaults["fusions"].items():
        held, full = row["held_out_ndcg@10"], row["ndcg@10"]
        lines.append(
            f"| {fusion} | {row['dense_weight']:g} | {held['vaswani']:.3f} / {held['long']:.3f}"
            f" | {full['vaswani']:.3f} / {full['long']:.3f} |"
            f" {', '.join(f'{w:g}' for w in row['folds_chose'])} |"
        )
    return [*lines, ""]


def plot(result: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, name in zip(axes, ("vaswani", "long"), strict=True):
        rows = result.get(name, {}).get("variants", {})
        for variant, row in rows.items():
            marker = "s" if "feedback" in variant else "o"
            ax.scatter(row["p50_ms"], row["ndcg@10"], marker=marker)
            ax.annotate(variant, (row["p50_ms"], row["ndcg@10"]), fontsize=7)
        ax.set_title(TITLES.get(name, name), fontsize=9)
        ax.set_xlabel("p50 over HTTP, ms (limit 100, one hit per document)")
        ax.set_ylabel("nDCG@10 at the default setting")
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT, dpi=110)


def _between(start: str, end: str, lines: list[str]) -> None:
    text = DOC.read_text()
    if start not in text:
        print(f"{DOC} has no {start} marker: nothing rendered", file=sys.stderr)
        return
    DOC.write_text(results.replace_between(text, start, end, "\n".join(lines)))


def render(result: dict[str, Any]) -> None:
    lines = ["", f"Measured {result['date']}.", ""]
    for name in ("vaswani", "long"):
        if name in result:
            lines += table(name, result[name])
    if "defaults" in result:
        lines += defaults_table(result["defaults"])
    lines += ["![nDCG@10 against p50](img/quality-latency.png)", ""]
    _between(START, END, lines)
    plot(result)


def render_levers(result: dict[str, Any]) -> None:
    load = result["load_average"]
    lines = [
        "",
        f"Load average (1 / 5 / 15 min) {' / '.join(map(str, load['before']))} at the start,"
        f" {' / '.join(map(str, load['after']))} at the end.",
        "",
        "| variant | p50 ms | p95 ms | p50 against before | p50 difference, ms |",
        "|---|---|---|---|---|",
    ]
    for name, row in result["rows"].items():
        lines.append(
            f"| {name} | {row['p50_ms']:g} | {row['p95_ms']:g} | {row['vs_before']:.3f} |"
            f" {row['delta_p50_ms']:+.2f} |"
        )
    _between(LEVERS_START, LEVERS_END, [*lines, ""])


def main() -> None:
    if RESULTS.exists():
        render(json.loads(RESULTS.read_text()))
    if LEVERS.exists():
        render_levers(json.loads(LEVERS.read_text()))


if __name__ == "__main__":
    main()
