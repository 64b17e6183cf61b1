"""Which index this release may open as it is. `index.json` records, beside the generation in
use, the layout's format and the settings that shaped the stored data: the dense model and its
dimension, the BM25 parameters, the chunk size. Opening an index:

- format 1 (the shard at the collection path, release 0.1.0): moved into a generation (the
  layout does it, `current_shard`); format 2 without settings (written before they were
  recorded): the settings of 0.1.0 are what it was written with. Both cost a rename or a line of
  JSON, so they happen in place when those settings are this release's.
- a format newer than this release knows: refused (an older release never guesses).
- settings other than this release's: refused in one line naming `astrolabe-search reindex`,
  which re-embeds the stored chunk text with this release's settings (app.ingest.reindex)."""

from app.index_settings import RELEASE_0_1_0, IndexSettings, changes
from app.store.errors import DataDirectoryUnusable, IndexOutdated
from app.store.layout import FORMAT, IndexLayout

REINDEX = "astrolabe-search reindex"


def recorded_settings(layout: IndexLayout) -> IndexSettings:
    """What the index was written with (0.1.0's where nothing is recorded)."""
    saved = layout.record().get("settings")
    if saved is None:
        return RELEASE_0_1_0
    try:
        return IndexSettings.from_record(saved)
    except ValueError as exc:
        raise DataDirectoryUnusable(
            f"{layout.root / 'index.json'} records unreadable settings (nothing was changed): {exc}"
        ) from exc


def check_format(layout: IndexLayout) -> None:
    """Refuse an index a newer release wrote (before anything else reads or moves it)."""
    found = layout.record().get("format", FORMAT)
    if not isinstance(found, int) or found > FORMAT:
        raise IndexOutdated(
            f"{layout.root} was written by a newer release (index format {found}; this one reads"
            f" up to {FORMAT}): run that release, or restore a backup this release made"
            " (nothing was changed)"
        )


def refuse_other_settings(layout: IndexLayout, current: IndexSettings) -> None:
    """Refuse an existing index written with settings other than `current`."""
    changed = changes(recorded_settings(layout), current)
    if changed:
        raise IndexOutdated(
            f"{layout.root} was written with other settings ({', '.join(changed)}): run"
            f" `{REINDEX}` while the service is stopped (it re-embeds the stored text; nothing"
            " was changed)"
        )


def record_settings(layout: IndexLayout, current: IndexSettings) -> None:
    """Record `current` where nothing is recorded yet (a new index, or one written before
    settings were recorded, with the same settings: `refuse_other_settings` has passed)."""
    if "settings" not in layout.record():
        layout.write_record({"settings": current.to_record()})
