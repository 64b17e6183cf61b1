"""Restore a backup: only a whole one (its manifest there, every file matching it), only into an
empty data directory (embedded) or an empty collection (server mode), and only once the restored
index opens with the manifest's counts (`app.store.open.restore_copy`: a restore cut short or
refused leaves no index)."""

from pathlib import Path

from app.backup.errors import BackupError
from app.backup.manifest import Counts, Manifest
from app.config import Settings
from app.store.base import Store
from app.store.open import empty_for_restore, restore_copy


def restore(src: Path, settings: Settings) -> Manifest:
    manifest = Manifest.read(src)
    backend = "server" if settings.qdrant_url else "embedded"
    if manifest.backend != backend:
        raise BackupError(
            f"{src} is a backup of the {manifest.backend} engine; this configuration uses the"
            f" {backend} one (SEARCH_QDRANT_URL {'set' if settings.qdrant_url else 'unset'})"
        )
    if not empty_for_restore(settings):
        place = (
            f"collection '{settings.collection}' at {settings.qdrant_url}"
            if settings.qdrant_url
            else f"SEARCH_DATA_DIR {settings.data_dir}"
        )
        raise BackupError(
            f"{place} is not empty: restore only into an empty data directory or collection"
            " (nothing was changed)"
        )
    manifest.verify(src)

    def check(store: Store) -> None:
        found = Counts.of(store)
        if found != manifest.counts:
            raise BackupError(f"the restored index counts {found}, its manifest {manifest.counts}")

    restore_copy(settings, src, list(manifest.files), check)
    return manifest
