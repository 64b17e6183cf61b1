"""Finding one's way around the documents a user may read: the folder tree, and the text around
a search result's chunk."""

from dataclasses import asdict

from app.auth import Principal
from app.errors import NotFound
from app.filters.conditions import folder_tree_filter
from app.filters.documents import readable_chunks_of
from app.filters.spec import normalize_folder
from app.search.context import StoredChunk, context_around
from app.search.folders import child_folders
from app.search.models.navigation import (
    ChunkContextParams,
    ChunkContextResponse,
    Folder,
    FolderParams,
    FoldersResponse,
)
from app.store import fields
from app.store.base import Hit, Store

FOLDER_LIMIT = 10_000  # folders below one parent, at any depth
MAX_CHUNKS = 100_000


class Navigator:
    def __init__(self, store: Store) -> None:
        self.store = store

    def folders(self, principal: Principal, params: FolderParams) -> FoldersResponse:
        """The folders directly in `parent` holding documents this user may read that match
        the other filters, with how many."""
        parent = normalize_folder(params.parent) or "/"
        spec = params.filters().to_spec()
        counts = self.store.facet(
            fields.DIRECTORIES, folder_tree_filter(principal, spec, parent), FOLDER_LIMIT
        )
        nodes = child_folders(parent, counts)
        return FoldersResponse(parent=parent, folders=[Folder(**asdict(n)) for n in nodes])

    def chunk_context(
        self, principal: Principal, params: ChunkContextParams
    ) -> ChunkContextResponse:
        """404 for a document this user may not read, exactly as for one that does not exist."""
        key = fields.doc_key(params.doc_type, params.doc_id)
        hits = self.store.scroll(readable_chunks_of(principal, key, 0, MAX_CHUNKS), MAX_CHUNKS)
        if not hits:
            raise NotFound(f"no document {params.doc_type}/{params.doc_id}")
        chunks = [_stored(hit) for hit in hits]
        present = sorted((c for c in chunks if c is not None), key=lambda c: c.index)
        if len(present) < len(chunks):
            raise NotFound(
                f"{params.doc_type}/{params.doc_id} was indexed before chunk offsets were kept:"
                " send it again"
            )
        found = context_around(present, params.start, params.end, params.context)
        return ChunkContextResponse(**asdict(found))


def _stored(hit: Hit) -> StoredChunk | None:
    p = hit.payload
    start, end = p.get(fields.CHUNK_START), p.get(fields.CHUNK_END)
    if start is None or end is None:
        return None
    page = p.get(fields.PAGE_NUMBER)
    return StoredChunk(
        int(p[fields.CHUNK_INDEX]),
        int(start),
        int(end),
        str(p[fields.TEXT]),
        int(page) if page is not None else None,
        tuple(p.get(fields.PAGE_BREAKS) or ()),
    )
