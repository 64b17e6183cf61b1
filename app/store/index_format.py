"""Which index this release may open as it is. `index.json` records, beside the generation in
use, the layout's format and the settings that shaped the stored data: the dense model and its
dimension, the BM25 parameters, the chunk size. Opening an index:

- format 1 (the shard at the collection path, release 0.1.0): moved into a generation (the
  layout does it, `current_shard`); format 2 without settings (written before they were
  recorded): the settings of 0.1.0 are what it was written with. Both cost a rename or a line of
  JSON, so they happen in place when those settings are this release's.
- a format newer than this release knows: refused (an older release never guesses).
- settings other than this release's: refused in one line naming `astrolabe-search reindex`,
  which re-embeds the stored chunk text with this release's settings (app.reindex)."""

from dataclasses import asdict, dataclass
from typing import Any

from app.embeddings.dense import DIMENSION, MODEL_NAME
from app.embeddings.sparse import bm25_parameters
from app.ingest.chunking import CHUNK_WORDS
from app.store.errors import DataDirectoryUnusable, IndexOutdated
from app.store.layout import FORMAT, IndexLayout

REINDEX = "astrolabe-search reindex"


@dataclass(frozen=True)
class IndexSettings:
    model: str
    dimension: int
    bm25: dict[str, Any]
    chunk_words: int

    @classmethod
    def current(cls) -> "IndexSettings":
        """This release's: a remote embedding server is only used once its probe proved it
        computes the local model's vectors, so the model is always this one."""
        return cls(MODEL_NAME, DIMENSION, bm25_parameters(), CHUNK_WORDS)

    @classmethod
    def from_record(cls, record: Any, where: str) -> "IndexSettings":
        try:
            return cls(
                str(record["model"]),
                int(record["dimension"]),
                dict(record["bm25"]),
                int(record["chunk_words"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise DataDirectoryUnusable(
                f"{where} records unreadable settings (nothing was changed): {exc!r}"
            ) from exc

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


# What release 0.1.0 wrote every index with (it recorded nothing).
RELEASE_0_1_0 = IndexSettings(
    MODEL_NAME,
    384,
    {"k": 1.2, "b": 0.75, "tokenizer": "word", "language": "english"},  # and a mean length 256
    180,
)


def bm25_changes(recorded: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """The BM25 parameters that differ (the one place that compares them)."""
    names = sorted(recorded | current)
    return [f"bm25.{name}" for name in names if recorded.get(name) != current.get(name)]


def changes(recorded: IndexSettings, current: IndexSettings) -> list[str]:
    """The names of the settings that differ."""
    named = [
        name
        for name in ("model", "dimension", "chunk_words")
        if getattr(recorded, name) != getattr(current, name)
    ]
    return named + bm25_changes(recorded.bm25, current.bm25)


def recorded_settings(layout: IndexLayout) -> IndexSettings:
    """What the index was written with (0.1.0's where nothing is recorded)."""
    saved = layout.record().get("settings")
    if saved is None:
        return RELEASE_0_1_0
    return IndexSettings.from_record(saved, str(layout.root / "index.json"))


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
