"""A copy of the shard (`app.store.copies`) is the shard at the moment it was made: inside the data
directory it shares the sealed data files (hard links) and copies the rest, so the copy and the
served shard each go their own way after it; elsewhere, or where the file system refuses a link,
every file is copied."""

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_client.http import models

from app.filters.selectors import documents
from app.store.base import Query
from app.store.copies import copy_shard, shard_copied
from app.store.edge import EdgeStore
from app.store.fields import DENSE_VECTOR
from app.store.layout import IndexLayout
from app.store.sealed import shareable_files
from tests.store.test_sealed import SEALED, chunk, of, sealed_store, write_every_kind


def files(root: Path) -> dict[Path, os.stat_result]:
    return {p.relative_to(root): p.stat() for p in root.rglob("*") if p.is_file()}


def linked(source: Path, copy: Path) -> set[Path]:
    """The files of `copy` that are the same file as `source`'s at the same place."""
    theirs = files(source)
    return {
        name
        for name, stat in files(copy).items()
        if name in theirs
        and (stat.st_dev, stat.st_ino) == (theirs[name].st_dev, theirs[name].st_ino)
    }


def state(store: EdgeStore) -> tuple[int, list[list[str]]]:
    """The documents and the nearest chunks of a few queries."""
    nearest = []
    for n in (3, 500, 1020):
        vector = chunk(n, seed=7).vector
        assert isinstance(vector, dict)
        query = Query(models.NearestQuery(nearest=vector[DENSE_VECTOR]), 10, DENSE_VECTOR)
        nearest.append([hit.id for hit in store.query(query)])
    return store.count(documents()), nearest


@pytest.fixture
def served(tmp_path: Path) -> Iterator[EdgeStore]:
    store = sealed_store(tmp_path)
    yield store
    store.close()


def test_a_rebuilds_copy_shares_the_sealed_files_and_goes_its_own_way(
    served: EdgeStore, tmp_path: Path
) -> None:
    copy = IndexLayout.of(tmp_path, "c").next_generation()
    with shard_copied(served, copy):
        pass
    sealed = {path.relative_to(served.path) for path in shareable_files(served.path)}
    assert sealed and linked(served.path, copy) == sealed
    at_the_copy = state(served)

    write_every_kind(served, seed=1)  # after the copy: not in it
    served.flush()
    after = state(served)
    assert after != at_the_copy
    rebuilt = EdgeStore(tmp_path, "c", shard=copy, optimizers=SEALED)
    assert rebuilt.wait_for_facet_index(timeout=0)  # the copy's facet snapshot
    assert state(rebuilt) == at_the_copy
    write_every_kind(rebuilt, seed=2)  # a rebuild optimizes its copy and replays writes
    rebuilt.delete(of(1))
    rebuilt.optimize()
    rebuilt.close()
    assert state(served) == after


def test_a_copy_outside_the_data_directory_shares_nothing(
    served: EdgeStore, tmp_path: Path
) -> None:
    backup = tmp_path.parent / f"{tmp_path.name}-backup"
    try:
        copied = served.copy_to(backup, {"documents": documents()})
        assert copied.counts["documents"] == served.count(documents())
        assert not linked(served.path, backup / served.path.name)
    finally:
        shutil.rmtree(backup, ignore_errors=True)


def test_where_no_link_can_be_made_every_file_is_copied(served: EdgeStore) -> None:
    with tempfile.TemporaryDirectory(dir="/dev/shm") as elsewhere:  # another file system
        served.flush()
        copy = Path(elsewhere) / "c" / served.path.name
        copy_shard(served.path, copy, share=True)
        assert files(copy).keys() == files(served.path).keys()
        assert not linked(served.path, copy)
        at_the_copy = state(served)
        opened = EdgeStore(Path(elsewhere), "c", shard=copy)
        assert state(opened) == at_the_copy
        opened.close()
