"""Where the benchmarks keep their data and write their results, and what a result carries
beside its figures: the machine and its load (the machine is shared)."""

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1]  # the bench/ folder
REPO = BENCH.parent
DATA = BENCH / ".data"  # prepared tiers, the vector cache, scratch (not in git)
RESULTS = BENCH / "results"  # what the runs measured (in git), rendered into the docs
DOCS = REPO / "docs"


def load_average(digits: int | None = 2) -> list[float]:
    """The machine's 1, 5 and 15 minute load averages (2 cores shared with other work), rounded
    to `digits` (None: as the kernel gives them)."""
    return [x if digits is None else round(x, digits) for x in os.getloadavg()]


def load_average_text() -> str:
    """The load averages as a line: `1.23 / 4.56 / 7.89`."""
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def machine() -> dict[str, Any]:
    import importlib.metadata as md

    versions = {
        name: md.version(name) for name in ("qdrant-edge-py", "onnxruntime", "fastapi", "uvicorn")
    }
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(),
        "cpus": len(os.sched_getaffinity(0)),
        "load_average": load_average(),
        "versions": versions,
    }


def write_results(path: Path, result: Any, indent: int | None = 1, end: str = "") -> Path:
    """`result` as JSON at `path`, its folder made if need be. `indent` and `end` are each
    results file's own (as it has always been written: a rerun changes its figures only)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=indent) + end)
    return path


def replace_between(text: str, start: str, end: str, body: str) -> str:
    """`text` with what stands between the markers `start` and `end` replaced by `body`."""
    before, _, rest = text.partition(start)
    _, _, after = rest.partition(end)
    return f"{before}{start}\n{body}\n{end}{after}"
