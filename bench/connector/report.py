"""The connector's results (bench/results/connector.json) as the tables of docs/benchmarks.md's
section "The Nextcloud connector", between its markers: `python -m bench.connector --report`."""

from pathlib import Path
from typing import Any

from bench.harness.results import DOCS, replace_between

DOC = DOCS / "benchmarks.md"
START, END = "<!-- connector:start -->", "<!-- connector:end -->"


def _load(figures: dict[str, Any], key: str = "load_average") -> str:
    return " / ".join(f"{x:.2f}" for x in figures.get(key) or figures["load_average_before"])


def _met(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _kinds(requests: dict[str, Any]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in requests["by_kind"].items())


def targets(result: dict[str, Any]) -> list[str]:
    full, interval = result["full"], result["settings"]["interval_s"]
    first, idle = full["first_index"], full["idle_ticks"]
    deep, new, edit = full["deep_edit_poll"], full["new_file_webhook"], full["edit_webhook"]
    depth = full["world"]["deep_file_depth"]
    search = full["search"]
    ratio = search["first index"]["p99"] / search["idle"]["p99"]
    model = result.get("model_alone")
    rate = f"**{first['files_per_s']}** files/s ({first['chunks_per_s']} chunks/s"
    rate += f"; the model alone: {model['chunks_per_s_median']} chunks/s)" if model else ")"
    one = set(idle["requests_per_tick"]) == {1} or set(idle["requests_per_tick"]) == {"1"}
    deep_requests = max(r["requests"]["total"] for r in deep["runs"])
    hooks = [r["searchable_s"] for r in new["runs"] + edit["runs"]]
    polls = [r["searchable_s"] for r in deep["runs"]]
    sizes = result["sizes"]
    files = " / ".join(f"{s['world']['files']:,}" for s in sizes)

    def peaks(role: str) -> list[float]:
        return [s["first_index"]["memory"]["vmhwm_by_role_mib"].get(role, 0.0) for s in sizes]

    def row(role: str) -> str:
        return " / ".join(f"{p:,.0f}" for p in peaks(role))

    grown, more = (
        peaks("serve")[-1] / peaks("serve")[0],
        sizes[-1]["world"]["files"] / sizes[0]["world"]["files"],
    )
    rows = [
        "| | measured | target | met | load (1 / 5 / 15 min) |",
        "|---|---|---|---|---|",
        f"| first index of {first['files']:,} files (3 users, shares) | {rate}, "
        f"{first['seconds']} s | | | {_load(first)} |",
        f"| tick, nothing changed: requests | {idle['ticks']} ticks, each "
        f"{'1 PROPFIND Depth 0' if one else idle['requests_per_tick']} | 1 | {_met(one)} "
        f"| {_load(idle)} |",
        f"| tick, nothing changed: time (end to end less the interval) | median "
        f"**{idle['tick_ms_median']} ms** (max {idle['tick_ms_max']}; from its request's arrival "
        f"to its end {idle['from_request_to_end_ms_median']} ms) | < 50 ms "
        f"| {_met(idle['tick_ms_median'] < 50)} | {_load(idle)} |",
        f"| tick after a file edited at depth {depth}: requests | **{deep_requests}** "
        f"({_kinds(deep['runs'][0]['requests'])}) | <= {depth + 2} "
        f"| {_met(deep_requests <= depth + 2)} | {_load(deep)} |",
        f"| change -> searchable with a webhook: new file / edit | median "
        f"**{new['searchable_s_median']} / {edit['searchable_s_median']} s** "
        f"(max {max(hooks)}; {len(hooks)} changes) | <= 2 s | {_met(max(hooks) <= 2)} "
        f"| {_load(edit)} |",
        f"| change -> searchable by polling (interval {interval:g} s) | median "
        f"**{deep['searchable_s_median']} s** (max {max(polls)}; {len(polls)} edits) "
        f"| <= {interval + 5:g} s | {_met(max(polls) <= interval + 5)} | {_load(deep)} |",
        f"| search p99 during the first index / idle | **{search['first index']['p99']} / "
        f"{search['idle']['p99']} ms** ({ratio:.1f}x; p50 {search['first index']['p50']} / "
        f"{search['idle']['p50']}) | <= 2x | {_met(ratio <= 2)} | {_load(first)}; "
        f"{_load(idle)} |",
        f"| peak RSS during the first index at {files} files, MiB | `serve` (HTTP, connector, "
        f"model) **{row('serve')}** (x{grown:.2f} for x{more:g} the files); `engine` (holds the "
        f"index) {row('engine')}; `extract` {row('extract')} | `serve` flat "
        f"| {_met(grown < 1.25)} | " + "; ".join(_load(s["first_index"]) for s in sizes) + " |",
    ]
    return rows


def where(result: dict[str, Any]) -> list[str]:
    first = result["full"]["first_index"]
    cpu = first["cpu_s_by_role"]
    rows = [
        f"CPU seconds during the first index ({first['seconds']} s of wall time on 2 cores): "
        + ", ".join(f"`{role}` {s}" for role, s in cpu.items())
        + " (`serve`: HTTP, the connector's threads and the model; `engine`: the engine "
        "process; `extract`: the extraction worker). The dialect's own time answering "
        + ", ".join(
            f"{row['requests']:,} {kind} {row['seconds']} s"
            for kind, row in first["dialect"].items()
        )
        + f"; {first['downloads']:,} downloads ({first['downloaded_mib']} MiB): each file once.",
        "",
    ]
    profile = first.get("profile")
    if not profile:
        return rows
    rows += [
        "Where each kind of thread of `serve` spent the first index (py-spy, 20 samples a "
        "second, waiting included; the file readers, embedding threads and searches counted "
        "while they work):",
        "",
        "| thread | samples | shares |",
        "|---|---|---|",
    ]
    for kind, figures in profile.items():
        shares = ", ".join(
            f"{step} {share * 100:.0f} %" for step, share in figures["share"].items() if share
        )
        rows.append(f"| {kind} | {figures['samples']:,} | {shares} |")
    return rows


def memory(result: dict[str, Any]) -> list[str]:
    rows = [
        "| files | peak RSS, MiB (sum sampled every 0.25 s) | serve | engine | extract "
        "| before connecting | files/s | load (1 / 5 / 15 min) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size in result["sizes"]:
        first = size["first_index"]
        m = first["memory"]
        by = m["vmhwm_by_role_mib"]
        rows.append(
            f"| {size['world']['files']:,} | {m['peak_rss_mib']:,.1f} | {by.get('serve', 0)} "
            f"| {by.get('engine', 0)} | {by.get('extract', 0)} | {m['rss_before_mib']} "
            f"| {first['files_per_s']} | {_load(first)} |"
        )
    return rows


def render(result: dict[str, Any]) -> str:
    machine = result["machine"]
    lines = [
        f"### Against the targets (run of {machine['date']}, {machine['cpus']} CPUs, revision "
        f"`{result['revision']}`)",
        "",
        f"`{result['command']}`",
        "",
        *targets(result),
        "",
        "### The first index: where the time goes",
        "",
        *where(result),
        "",
        "### Memory against the number of files (each size a fresh dialect and service)",
        "",
        *memory(result),
    ]
    return "\n".join(lines)


def write(result: dict[str, Any], doc: Path = DOC) -> Path:
    doc.write_text(replace_between(doc.read_text(), START, END, render(result)))
    return doc
