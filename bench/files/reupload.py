"""No work twice: the time of an identical re-upload of a large file against its first upload
(target: under 10 %). The real app in this process, the real model, a generated PDF of
`--pages` pages; each round uses a new doc_id for its first upload, then sends the same bytes
and metadata again; both with `?wait=true`.

    .venv/bin/python -m bench.files.reupload [--pages 300] [--runs 3]
"""

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from app.embeddings.dense import MiniLMEncoder
from bench.harness import results
from tests.extract import samples
from tests.helpers import auth, running_app

RESULTS = results.RESULTS / "reupload.json"
PAGE_TEXT = "Page {n} of the annual report tells of harbours, boats and the weather. " * 12


def upload(app: Any, data: bytes, doc_id: str) -> float:
    started = time.perf_counter()
    response = app.post(
        "/api/v1/files",
        params={"wait": "true"},
        files={"file": ("report.pdf", data)},
        data={"metadata": json.dumps({"doc_id": doc_id, "owner": "alice"})},
        headers=auth(),
    )
    assert response.status_code == 200, response.text
    return time.perf_counter() - started


def measure(pages: int, runs: int) -> dict[str, Any]:
    data = samples.pdf([PAGE_TEXT.format(n=n) for n in range(1, pages + 1)])
    first, again = [], []
    with (
        tempfile.TemporaryDirectory() as folder,
        running_app(Path(folder) / "data", MiniLMEncoder()) as app,
    ):
        for run in range(runs):
            first.append(upload(app, data, f"report-{run}"))
            again.append(upload(app, data, f"report-{run}"))
    return {
        "pages": pages,
        "bytes": len(data),
        "first_s": [round(s, 3) for s in first],
        "again_s": [round(s, 4) for s in again],
        "first_median_s": round(statistics.median(first), 3),
        "again_median_s": round(statistics.median(again), 4),
        "ratio": round(statistics.median(again) / statistics.median(first), 4),
        "load_average": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    figures = measure(args.pages, args.runs) | {"machine": results.machine()}
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps({k: v for k, v in figures.items() if k != "machine"}, indent=2))


if __name__ == "__main__":
    main()
