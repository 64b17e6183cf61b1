"""Qdrant Edge searches a shard's segments on one thread per core the process may use (its own
default is 8 whatever the cores)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SEARCH_ONCE = """
import glob, os, sys
os.sched_setaffinity(0, {int(core) for core in sys.argv[2].split(",")})
from pathlib import Path
from qdrant_client.http import models
from app.store.base import Query
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR

store = EdgeStore(Path(sys.argv[1]), "c", facet_index=False)
store.query(Query(models.NearestQuery(nearest=[0.1] * 384), 10, DENSE_VECTOR))
names = [open(f).read().strip() for f in glob.glob(f"/proc/{os.getpid()}/task/*/comm")]
print(sum(name.startswith("edge-search") for name in names))
store.close()
"""


def search_threads_on(cores: set[int], data_dir: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", SEARCH_ONCE, str(data_dir), ",".join(map(str, cores))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr  # what went wrong, not only that it did
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to tell")
def test_one_search_thread_per_core_the_process_may_use(tmp_path: Path) -> None:
    first, second = sorted(os.sched_getaffinity(0))[:2]
    assert search_threads_on({first}, tmp_path / "one") == 1
    assert search_threads_on({first, second}, tmp_path / "two") == 2
