"""The embedded index copied at one moment of its writes: the shard generation in use, its facet
snapshot and its `index.json`, with the counts of that moment. Writes wait while the files are
copied (they are not refused); searches go on. Runs where the shard is open: in the engine
process under `serve` (a control call, `app.store.engine`), in-process otherwise."""

import json
import shutil
from pathlib import Path

from app.backup.files import copy_tree_sparse
from app.backup.manifest import Counts
from app.store.edge import EdgeStore
from app.store.engine import disk_usage
from app.store.errors import StorageFull
from app.store.layout import INDEX_FILE, IndexLayout


def copy_at_one_moment(store: EdgeStore, target: Path) -> Counts:
    """Into `target` (new or empty): the shard, its facet snapshot and `index.json`; refused
    before anything is copied unless it fits with the store's disk reserve left free."""
    needed = disk_usage(store.path) + store.min_free_bytes
    target.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(target).free
    if free < needed:
        raise StorageFull(
            f"a backup needs {needed // 2**20} MiB free at {target}, {free // 2**20} MiB are:"
            " nothing was copied"
        )
    layout = IndexLayout(store.path.parent)
    copy = target / store.path.name
    with store.writes_paused():
        store.flush()
        shutil.rmtree(copy, ignore_errors=True)  # what an engine killed mid-copy left
        copy_tree_sparse(store.path, copy)
        store.save_facets(IndexLayout.facet_snapshot(copy))
        record = layout.record() | {"shard": copy.name}
        (target / INDEX_FILE).write_text(json.dumps(record) + "\n", encoding="utf-8")
        return Counts.of(store)
