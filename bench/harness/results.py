"""Where the benchmarks keep their data and write their results."""

from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]  # the bench/ folder
REPO = BENCH.parent
DATA = BENCH / ".data"  # prepared tiers, the vector cache, scratch (not in git)
RESULTS = BENCH / "results"  # what the runs measured (in git), rendered into the docs
DOCS = REPO / "docs"
