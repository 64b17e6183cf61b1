"""Where the embedded index lives on disk. `<SEARCH_DATA_DIR>/<collection>/` holds generations
of the Qdrant Edge shard (`shard-000001/`, ...) and `index.json`, which names the one in use. A
shard rebuilt on the side replaces the served one by an atomic replace of `index.json`, never by
moving a directory: Qdrant Edge keeps the paths it opened and fails once they move.

Beside the generations: the facet snapshot of a generation (`shard-000001.facets.npz`, see
`facet_snapshot`) and, while a rebuild runs, the journal of the writes made since its copy
(`shard-000002.journal`, see `journal`). Format 1 was the shard itself at the collection path; it
is moved into generation 0 once it has been opened successfully (a refused directory is never
touched)."""

import json
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.durable import write_atomically
from app.store.errors import DataDirectoryUnusable

INDEX_FILE = "index.json"
MERGE_OWED = "merge_owed"  # index.json: a rebuild left segments a merge is owed for
FORMAT = 2
EDGE_CONFIG = "edge_config.json"  # written by Qdrant Edge: marks a directory as a shard
BACKUP_PREFIX, BACKUP_SUFFIX = "backup-", ".partial"  # a running service's backup copies
_GENERATION = re.compile(r"^shard-(\d{6})$")


@dataclass(frozen=True)
class IndexLayout:
    root: Path  # <data_dir>/<collection>

    @classmethod
    def of(cls, data_dir: Path, collection: str) -> "IndexLayout":
        return cls(data_dir / collection)

    @property
    def legacy(self) -> bool:
        """Format 1: the shard itself at the collection path."""
        return (self.root / EDGE_CONFIG).exists()

    @property
    def exists(self) -> bool:
        """Whether an index (of either format) is here."""
        return (self.root / INDEX_FILE).exists() or self.legacy or self._moving().exists()

    def check(self) -> None:
        """Refuse a path that is neither empty, nor a layout, nor a format-1 shard (in one
        line, changing nothing)."""
        if self.root.exists() and not self.root.is_dir():
            raise DataDirectoryUnusable(
                f"{self.root} is not a directory: refusing to use it (nothing was changed); point"
                " SEARCH_DATA_DIR or SEARCH_COLLECTION elsewhere"
            )
        foreign = not (self.root / INDEX_FILE).exists() and not self.legacy
        if foreign and self.root.is_dir() and any(self.root.iterdir()):
            raise DataDirectoryUnusable(
                f"{self.root} holds files that are not an Astrolabe index: refusing to write"
                " into it (nothing was changed); point SEARCH_DATA_DIR or SEARCH_COLLECTION"
                " elsewhere"
            )

    def current(self) -> Path:
        """The generation in use; a new layout (generation 1) where there is none yet."""
        if self.legacy:
            return self.root
        index = self.root / INDEX_FILE
        if index.exists():
            try:
                name = str(self.record()["shard"])
            except KeyError as exc:
                raise DataDirectoryUnusable(
                    f"{index} is unreadable (nothing was changed): {exc}"
                ) from exc
            if not _GENERATION.match(name):
                raise DataDirectoryUnusable(f"{index} names no shard generation: {name!r}")
            return self.root / name
        self.root.mkdir(parents=True, exist_ok=True)
        first = self.generation(1)
        self.switch_to(first)
        return first

    def generation(self, number: int) -> Path:
        return self.root / f"shard-{number:06d}"

    def next_generation(self) -> Path:
        numbers = [int(m[1]) for p in self._entries() if (m := _GENERATION.match(p.name))]
        return self.generation(max(numbers, default=0) + 1)

    def switch_to(self, shard: Path, merge_owed: bool = False) -> None:
        """Make `shard` the generation in use (atomic: a crash leaves the old or the new one);
        what else the record holds (the settings, `index_format`) stays. `merge_owed`: its
        segments are to be merged once writes pause (`app.store.engine.rebuild`)."""
        self.write_record({"format": FORMAT, "shard": shard.name, MERGE_OWED: merge_owed})

    @property
    def merge_owed(self) -> bool:
        """False where the record is unreadable: opening the shard says why, in one line."""
        try:
            return bool(self.record().get(MERGE_OWED, False))
        except DataDirectoryUnusable:
            return False

    # --- the record's other fields (app.store.index_format, app.backup) -----------------------

    def record(self) -> dict[str, Any]:
        """`index.json` as written; empty where there is none yet."""
        index = self.root / INDEX_FILE
        if not index.exists():
            return {}
        try:
            record = json.loads(index.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise DataDirectoryUnusable(
                f"{index} is unreadable (nothing was changed): {exc}"
            ) from exc
        if not isinstance(record, dict):
            raise DataDirectoryUnusable(f"{index} is unreadable (nothing was changed)")
        return record

    def write_record(self, fields: dict[str, Any]) -> None:
        """Set these fields of `index.json`, keeping the others (atomic)."""
        record = self.record() | fields
        write_atomically(self.root / INDEX_FILE, json.dumps(record) + "\n")

    def backup_staging(self) -> Path:
        """A new directory name for a backup's copy, made before the service sends it."""
        return self.root / f"{BACKUP_PREFIX}{uuid.uuid4().hex}{BACKUP_SUFFIX}"

    def remove_backup_leftovers(self) -> None:
        """Copies a killed service left (only for the process that owns the index)."""
        for path in self.root.glob(f"{BACKUP_PREFIX}*{BACKUP_SUFFIX}"):
            shutil.rmtree(path, ignore_errors=True)

    def migrate_legacy(self) -> None:
        """Move a format-1 shard (closed, opened successfully before) into generation 0. Each
        step is a rename; `resume_migration` finishes one a crash interrupted."""
        moving = self._moving()
        self.root.rename(moving)
        self.resume_migration()

    def resume_migration(self) -> None:
        moving = self._moving()
        if not moving.exists():
            return
        self.root.mkdir(exist_ok=True)
        target = self.generation(0)
        moving.rename(target)
        self.switch_to(target)

    def _moving(self) -> Path:
        return self.root.with_name(self.root.name + ".format1")

    @staticmethod
    def facet_snapshot(shard: Path) -> Path:
        return shard.with_name(shard.name + ".facets.npz")

    @staticmethod
    def journal(shard: Path) -> Path:
        return shard.with_name(shard.name + ".journal")

    def remove_other_generations(self, keep: Path) -> list[str]:
        """Delete every generation but `keep` with its files (abandoned rebuilds, retired
        shards), and the journal `keep` was rebuilt with. Only for the process that holds
        `keep` open, i.e. owns the index."""
        removed = []
        for path in self._entries():
            owner = path.name.split(".", 1)[0]
            if path == self.journal(keep) or (_GENERATION.match(owner) and owner != keep.name):
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
                removed.append(path.name)
        return removed

    def _entries(self) -> list[Path]:
        return sorted(self.root.iterdir()) if self.root.is_dir() else []
