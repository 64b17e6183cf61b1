"""Backup and restore times at a prepared tier (the figures in docs/deployment.md, "Backup and
restore"):

    .venv/bin/python -m bench.index.backup --tier 100k --runs 3

- stopped: what `astrolabe-search backup DEST` does on a stopped index: the copy (the moment
  writes would wait for under `serve`), then the checksums and the manifest;
- running: through `serve` (`backup --url`): the copy in the engine process, the manifest, the
  tar stream over loopback unpacked and checked again on the client's side;
- restore: `astrolabe-search restore SRC` into an empty data directory (checksums checked, files
  copied, the index opened and counted).
Medians of the runs, with the 1-minute load average (the machine is shared) beside each."""

import argparse
import json
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from app.backup.make import make_backup
from app.backup.manifest import Manifest
from app.backup.restore import restore
from app.backup.stream import download
from app.config import Settings
from app.store.copies import disk_usage
from app.store.edge import EdgeStore
from bench.harness import service
from bench.harness.figures import timed
from bench.harness.prepare import COLLECTION, tier_dir
from bench.harness.results import DATA, RESULTS, load_average, write_results


def stopped(data_dir: Path, dest: Path) -> dict[str, float]:
    """The copy alone (writes paused this long under serve), and the whole backup."""
    store = EdgeStore(data_dir, COLLECTION, facet_index=False, check_settings=False)
    try:
        copy_s, _ = timed(lambda: store.copy_to(dest / "copy", {}))
        shutil.rmtree(dest / "copy")
        whole_s, _ = timed(lambda: make_backup(store, dest / "backup", COLLECTION))
    finally:
        store.close()
    return {"copy_s": copy_s, "backup_s": whole_s}


def restored(backup: Path, into: Path) -> float:
    settings = Settings(data_dir=into, collection=COLLECTION)
    seconds, _ = timed(lambda: restore(backup, settings))
    return seconds


def running(data_dir: Path, dest: Path) -> float:
    with service.running_service(data_dir) as svc:
        seconds, _ = timed(lambda: download(svc.base, service.INDEX_KEY, dest))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.index.backup")
    parser.add_argument("--tier", default="100k")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    data_dir = tier_dir(args.data, args.tier) / "data"
    runs: list[dict[str, Any]] = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(dir=args.data) as tmp:
            work = Path(tmp)
            run: dict[str, Any] = {"load_before": load_average(1)[0]}
            run |= stopped(data_dir, work)
            run["restore_s"] = restored(work / "backup", work / "restored")
            run["running_backup_s"] = running(data_dir, work / "through-service")
            run["load_after"] = load_average(1)[0]
            manifest = Manifest.read(work / "backup")
            run["backup_mib_on_disk"] = round(disk_usage(work / "backup") / 2**20)
            run["backup_mib_apparent"] = round(
                sum(f.bytes for f in manifest.files.values()) / 2**20
            )
            run["counts"] = manifest.counts.__dict__
            runs.append(run)
            print(json.dumps(run), flush=True)
    keys = ["copy_s", "backup_s", "restore_s", "running_backup_s"]
    summary = {key: round(statistics.median(r[key] for r in runs), 2) for key in keys}
    result = {"tier": args.tier, "median": summary, "runs": runs}
    write_results(args.out / f"backup-{args.tier}.json", result, end="\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
