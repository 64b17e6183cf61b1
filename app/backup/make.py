"""Make a backup directory of whatever store the service or a command has open: the embedded
index copied at one moment of its writes (in-process, or by the engine process under `serve`),
or a Qdrant snapshot of the collection (server mode); the manifest comes last."""

import json
from pathlib import Path

from app.backup.errors import BackupError
from app.backup.manifest import Counts, Manifest
from app.backup.shard import copy_at_one_moment
from app.failpoints import failpoint
from app.store.base import Store
from app.store.edge import EdgeStore
from app.store.layout import INDEX_FILE
from app.store.process import ProcessStore
from app.store.server import ServerStore

SNAPSHOT_FILE = "collection.snapshot"
SNAPSHOT_ATTEMPTS = 3


def start_destination(dest: Path) -> None:
    """`dest` must be new or an empty directory: a backup never mixes with other files."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BackupError(f"{dest} is not an empty directory: choose a new one for the backup")
    dest.mkdir(parents=True, exist_ok=True)


def make_backup(store: Store, dest: Path, collection: str) -> Manifest:
    """A whole backup of `store` in `dest` (new or empty), its manifest written last."""
    start_destination(dest)
    if isinstance(store, ServerStore):
        counts = _snapshot(store, dest)
        record = None
    elif isinstance(store, (EdgeStore, ProcessStore)):
        counts = _copy(store, dest)
        record = json.loads((dest / INDEX_FILE).read_text(encoding="utf-8"))
    else:
        raise BackupError(f"a {type(store).__name__} cannot be backed up")
    manifest = Manifest.describe(dest, store.backend, collection, counts, record)
    failpoint("backup_copied")
    manifest.write(dest)
    return manifest


def _copy(store: EdgeStore | ProcessStore, dest: Path) -> Counts:
    if isinstance(store, ProcessStore):
        counts = store.copy_for_backup(dest)
    else:
        counts = copy_at_one_moment(store, dest)
    if not isinstance(counts, Counts):
        raise BackupError(f"the engine answered a backup with {type(counts).__name__}")
    return counts


def _snapshot(store: ServerStore, dest: Path) -> Counts:
    """Qdrant's snapshot with the counts of its moment: taken again while the collection
    changes under it (counts equal before and after)."""
    target = dest / SNAPSHOT_FILE
    for _ in range(SNAPSHOT_ATTEMPTS):
        before = Counts.of(store)
        try:
            store.download_snapshot(target)
        except NotImplementedError as exc:
            raise BackupError(
                "server mode backs up through Qdrant's snapshot API, which needs a Qdrant"
                " server (qdrant-client's local mode has none)"
            ) from exc
        if Counts.of(store) == before:
            return before
        target.unlink()
    raise BackupError(
        f"the collection changed during each of {SNAPSHOT_ATTEMPTS} snapshots: pause the"
        " writers (the Astrolabe app's sync) and run the backup again"
    )
