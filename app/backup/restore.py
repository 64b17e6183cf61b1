"""Restore a backup: only a whole one (its manifest there, every file matching it), only into an
empty data directory (embedded) or an empty collection (server mode), and only once the restored
index opens with the manifest's counts. An embedded restore is put together beside its place
(`.restore.partial`) and renamed into it at the end: a restore cut short leaves no index."""

import shutil
from pathlib import Path

from app.backup.errors import BackupError
from app.backup.files import copy_sparse
from app.backup.make import SNAPSHOT_FILE
from app.backup.manifest import Counts, Manifest
from app.config import Settings
from app.store.edge import EdgeStore
from app.store.server import ServerStore

PARTIAL = ".restore.partial"


def restore(src: Path, settings: Settings) -> Manifest:
    manifest = Manifest.read(src)
    backend = "server" if settings.qdrant_url else "embedded"
    if manifest.backend != backend:
        raise BackupError(
            f"{src} is a backup of the {manifest.backend} engine; this configuration uses the"
            f" {backend} one (SEARCH_QDRANT_URL {'set' if settings.qdrant_url else 'unset'})"
        )
    if settings.qdrant_url:
        _restore_server(src, settings, settings.qdrant_url, manifest)
    else:
        _restore_embedded(src, settings, manifest)
    return manifest


def _restore_embedded(src: Path, settings: Settings, manifest: Manifest) -> None:
    data_dir = settings.data_dir
    partial = data_dir / PARTIAL
    shutil.rmtree(partial, ignore_errors=True)  # what a restore cut short left
    if data_dir.exists() and (not data_dir.is_dir() or any(data_dir.iterdir())):
        raise BackupError(
            f"SEARCH_DATA_DIR {data_dir} is not empty: restore only into an empty data directory"
            " (nothing was changed)"
        )
    manifest.verify(src)
    root = partial / settings.collection
    for name in manifest.files:
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        copy_sparse(src / name, target)
    _check_counts(
        EdgeStore(partial, settings.collection, facet_index=False, check_settings=False), manifest
    )
    root.rename(data_dir / settings.collection)
    partial.rmdir()


def _restore_server(src: Path, settings: Settings, url: str, manifest: Manifest) -> None:
    store = ServerStore.from_settings(url, settings.collection, settings)
    try:
        if store.count():
            raise BackupError(
                f"collection '{settings.collection}' at {url} is not empty: restore only into"
                " an empty (or new) collection (nothing was changed)"
            )
        manifest.verify(src)
        try:
            store.upload_snapshot(src / SNAPSHOT_FILE)
        except NotImplementedError as exc:
            raise BackupError("restoring a snapshot needs a Qdrant server") from exc
    finally:
        store.close()
    _check_counts(ServerStore.from_settings(url, settings.collection, settings), manifest)


def _check_counts(store: EdgeStore | ServerStore, manifest: Manifest) -> None:
    try:
        found = Counts.of(store)
    finally:
        store.close()
    if found != manifest.counts:
        raise BackupError(f"the restored index counts {found}, its manifest {manifest.counts}")
