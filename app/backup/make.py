"""Make a backup directory of whatever store the service or a command has open: a copy of the
index at one moment of its writes (`Store.copy_to`: the embedded shard, or a Qdrant snapshot of
the collection), with the counts of that moment; the manifest comes last."""

from pathlib import Path

from app.backup.errors import BackupError
from app.backup.manifest import Counts, Manifest
from app.failpoints import failpoint
from app.store.base import Store


def start_destination(dest: Path) -> None:
    """`dest` must be new or an empty directory: a backup never mixes with other files."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BackupError(f"{dest} is not an empty directory: choose a new one for the backup")
    dest.mkdir(parents=True, exist_ok=True)


def make_backup(store: Store, dest: Path, collection: str) -> Manifest:
    """A whole backup of `store` in `dest` (new or empty), its manifest written last."""
    start_destination(dest)
    copied = store.copy_to(dest, Counts.SELECTORS)
    manifest = Manifest.describe(
        dest, store.backend, collection, Counts(**copied.counts), copied.record
    )
    failpoint("backup_copied")
    manifest.write(dest)
    return manifest
