"""The one door to the store: `open_store(settings, use)` opens what the settings name (the
embedded engine unless SEARCH_QDRANT_URL is set) in the shape a use needs. `serve`, every
command and the tests come in here; above `store/` nothing knows which class answers or whether
a process runs it.

- `Use.SERVE`: embedded, the shard in shard servers of their own that rebuild its graph while
  it serves (`app.store.engine`); `start_early` launches the first one before the web stack is
  imported.
- `Use.IN_PROCESS`: embedded, in this process, with the facet index (an app in tests).
- `Use.COMMAND`: embedded, in this process, without the facet index (a one-shot command would
  only pay for loading it).
- `Use.AS_IS`: as COMMAND, but an index written with other settings is opened as it is (a
  backup of it, `reindex`).

A Qdrant server is the same `ServerStore` for every use. Free of heavy imports at module level:
`serve` imports it before anything else to launch the first shard server."""

import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from app.config import Settings
from app.store import read_ahead
from app.store.engine.launch import Launcher
from app.store.errors import StoreError
from app.store.qdrant_models import import_models_only

if TYPE_CHECKING:
    from app.store.base import Store


class Use(StrEnum):
    SERVE = "serve"
    IN_PROCESS = "in_process"
    COMMAND = "command"
    AS_IS = "as_is"


@dataclass(frozen=True)
class EarlyStart:
    """The serving shard server, launched before `open_store(settings, Use.SERVE)` takes it,
    and the process reading its shard's files ahead of its open (`read_ahead`)."""

    launcher: Launcher
    process: "subprocess.Popen[str]"
    reader: "subprocess.Popen[bytes] | None"

    def opened(self) -> None:
        """Once the shard is open, what is left to read ahead is of no use."""
        if self.reader is not None:
            self.reader.kill()
            self.reader.wait()

    def discard(self) -> None:
        """For a start refused after the launch."""
        self.opened()
        self.process.kill()
        self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def start_early(settings: Settings) -> EarlyStart | None:
    """Launch the serving shard server now, so that its imports and the opening of its shard
    run while the caller imports the web stack (None in server mode). Free of heavy imports;
    call it before anything imports qdrant-client: on the embedded engine the caller uses only
    its models, so its clients are left unimported (`qdrant_models`: ~0.55 s of a start)."""
    if settings.qdrant_url:
        return None
    import_models_only()
    reader = _read_ahead(settings)
    launcher = Launcher.of(settings)
    return EarlyStart(launcher, launcher.launch(launcher.socket(1)), reader)


def _read_ahead(settings: Settings) -> "subprocess.Popen[bytes] | None":
    """The process reading the served shard and its facet snapshot ahead of the open."""
    from app.store.layout import IndexLayout

    shard = _served_shard(settings)
    return None if shard is None else read_ahead.start(shard, IndexLayout.facet_snapshot(shard))


def _served_shard(settings: Settings) -> Path | None:
    """The generation `index.json` names, read without changing anything (the engine checks
    and opens it); None where there is none to read (a new, format-1 or unreadable index)."""
    from app.store.layout import INDEX_FILE, IndexLayout

    layout = IndexLayout.of(settings.data_dir, settings.collection)
    try:
        named = (layout.root / INDEX_FILE).is_file() and not layout.legacy
        return layout.current() if named else None  # writes only where there is no record
    except (StoreError, OSError):
        return None


def open_store(
    settings: Settings, use: Use = Use.IN_PROCESS, early: EarlyStart | None = None
) -> "Store":
    if settings.qdrant_url:
        from app.store.server import ServerStore

        return ServerStore.from_settings(settings.qdrant_url, settings.collection, settings)
    if use is Use.SERVE:
        from app.store.engine.supervisor import Supervisor

        launched = None if early is None else (early.launcher, early.process)
        try:
            return Supervisor(settings, launched=launched).start()
        finally:
            if early is not None:
                early.opened()
    from app.store.edge import EdgeStore

    return EdgeStore(
        settings.data_dir,
        settings.collection,
        settings.min_free_bytes,
        facet_index=use is Use.IN_PROCESS,
        check_settings=use is not Use.AS_IS,
    )


def embedded_index_exists(settings: Settings) -> bool:
    """Whether SEARCH_DATA_DIR holds an embedded index of SEARCH_COLLECTION (of any format)."""
    from app.store.layout import IndexLayout

    return IndexLayout.of(settings.data_dir, settings.collection).exists


def index_dir(settings: Settings) -> Path:
    """The embedded index's own directory: beside its generations, the state of a command
    that works on it over several runs (a reindex's checkpoint) lives there."""
    return settings.data_dir / settings.collection


def graph_due(store: "Store", threshold: int, written: int) -> int | None:
    """After a bulk load of `written` chunks: how many chunks are outside the HNSW graph, when
    they are enough to make an exact scan slow (SEARCH_HNSW_THRESHOLD, measured in
    docs/deployment.md); None when they are not, or where the engine indexes by itself. The
    chunks just written are all outside it (the engine's estimate misses re-sent ones)."""
    index = store.vector_index()
    if index is None:
        return None
    outside = max(index.plain, written)
    return outside if outside >= max(threshold, 1) else None


def build_graph(store: "Store") -> bool:
    """Merge the segments and build the HNSW graph of a store opened in this process (a
    command's, with `serve` stopped: it holds the interpreter for minutes at 100k chunks).
    False where there is nothing to build: a Qdrant server indexes by itself."""
    from app.store.edge import EdgeStore

    if not isinstance(store, EdgeStore):
        return False
    store.optimize()
    return True


def build_full_segment(store: "Store") -> bool:
    """During a bulk load, after each batch: build the graph of the chunks written outside it
    once they fill a segment (`app.store.segments`), so that the load goes on in a new segment
    instead of growing one past the cap. False where there was nothing to build."""
    from app.store import segments

    index = store.vector_index()
    if index is None or index.plain < segments.SEGMENT_CHUNKS:
        return False
    return build_graph(store)


def empty_for_restore(settings: Settings) -> bool:
    """Whether the index's place holds nothing a restore would overwrite: an empty (or new)
    SEARCH_DATA_DIR, once what a restore cut short left there is removed; on a Qdrant server,
    an empty (or new) collection."""
    if settings.qdrant_url:
        store = open_store(settings, Use.AS_IS)
        try:
            return store.count() == 0
        finally:
            store.close()
    data_dir = settings.data_dir
    shutil.rmtree(data_dir / RESTORING, ignore_errors=True)
    return not data_dir.exists() or (data_dir.is_dir() and not any(data_dir.iterdir()))


def restore_copy(
    settings: Settings, source: Path, files: Sequence[str], check: Callable[["Store"], None]
) -> None:
    """Make a copy `Store.copy_to` wrote (its `files`, under `source`) the index: embedded, into
    SEARCH_DATA_DIR (empty: the caller checked), put together beside its place and renamed into
    it only once `check` passed on it opened, so a restore cut short or refused leaves no index;
    on a Qdrant server, into the collection (empty: the caller checked), then `check`ed.
    Callers check `empty_for_restore` first."""
    if settings.qdrant_url:
        from app.store.server import ServerStore

        server = ServerStore.from_settings(settings.qdrant_url, settings.collection, settings)
        try:
            server.restore_snapshot(source)
        finally:
            server.close()
        _checked(open_store(settings, Use.AS_IS), check)
        return
    from app.store.copies import copy_sparse
    from app.store.edge import EdgeStore

    partial = settings.data_dir / RESTORING
    root = partial / settings.collection
    for name in files:
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        copy_sparse(source / name, target)
    restored = EdgeStore(partial, settings.collection, facet_index=False, check_settings=False)
    _checked(restored, check)
    root.rename(settings.data_dir / settings.collection)
    partial.rmdir()


RESTORING = ".restore.partial"  # where an embedded restore is put together


def _checked(store: "Store", check: Callable[["Store"], None]) -> None:
    try:
        check(store)
    finally:
        store.close()
