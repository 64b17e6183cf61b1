"""The start bench puts a data directory out of the page cache as asked, and measures it."""

import os
import random
from pathlib import Path

import pytest

from bench.index.start_cache import PIECE, evict, in_cache, without_snapshots


def _cached_tree(root: Path) -> None:
    for name, size in (("a/x.dat", 40 * PIECE), ("b/y.dat", 3)):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)
        with path.open("rb+") as file:
            os.fsync(file.fileno())  # clean pages: the kernel may drop them
        path.read_bytes()


def test_cold_puts_every_page_out_warm_none_part_some(tmp_path: Path) -> None:
    _cached_tree(tmp_path)
    assert in_cache(tmp_path) == 1
    evict(tmp_path, "warm", random.Random(1))
    assert in_cache(tmp_path) == 1
    evict(tmp_path, "cold", random.Random(1))
    if in_cache(tmp_path) > 0:
        pytest.skip("this file system keeps the files in memory whatever is asked (tmpfs)")
    _cached_tree(tmp_path)
    evict(tmp_path, "part", random.Random(1))
    assert 0.5 < in_cache(tmp_path) < 1


def test_a_crash_start_finds_no_facet_snapshot_and_the_next_finds_it_back(tmp_path: Path) -> None:
    snapshot = tmp_path / "astrolabe" / "shard-000003.facets.npz"
    snapshot.parent.mkdir()
    snapshot.write_bytes(b"kept")
    with without_snapshots(tmp_path, crash=True):
        assert not snapshot.exists()
        snapshot.write_bytes(b"saved by the stop")  # a load finished during the start
    assert snapshot.read_bytes() == b"kept"  # every start finds the same state
    with without_snapshots(tmp_path, crash=False):
        assert snapshot.read_bytes() == b"kept"
