"""The in-memory facet index (`doc_facets`) saved beside its shard generation, so an engine that
opens the shard next loads it in milliseconds instead of reading every document back (2-7 s at
100k documents, a page at a time: `facet_upkeep.LOAD_PAUSE_S`).

A snapshot is only ever the exact state of its shard: it is written when the shard is closed
(after the last write) or copied (under the write lock), and it is taken away (deleted) by the
store that loads it, before that store's first write. A crash therefore leaves no snapshot, and
the next start reads the documents back."""

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from app.store.doc_facets import DocumentFacets

log = logging.getLogger(__name__)
VERSION = 1


def save(facets: DocumentFacets, path: Path) -> bool:
    """Write `facets` to `path` (atomically); False if it is not a complete, exact index."""
    state = facets.export()
    if state is None:
        return False
    meta = {"version": VERSION, "vocabularies": state.vocabularies, "masks": state.mask_keys}
    encoded = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    contents: dict[str, Any] = {"meta": encoded, **state.arrays}
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as out:
        np.savez(out, **contents)
    partial.replace(path)
    return True


def take(path: Path) -> DocumentFacets | None:
    """The index saved at `path`, which is deleted: None if there is none or it is unreadable
    (then the documents are read back from the shard)."""
    if not path.exists():
        return None
    try:
        with np.load(path) as saved:
            meta = json.loads(saved["meta"].tobytes())
            if meta.get("version") != VERSION:
                return None
            arrays = {name: saved[name] for name in saved.files if name != "meta"}
            # A snapshot of an earlier release has no masks: they are made at first use.
            return DocumentFacets.restore(arrays, meta["vocabularies"], meta.get("masks", []))
    except Exception:
        log.exception("facet snapshot %s unreadable: the documents are read back instead", path)
        return None
    finally:
        path.unlink(missing_ok=True)
