"""Choose the engine from the settings: embedded (Qdrant Edge) unless SEARCH_QDRANT_URL is set."""

from app.config import Settings
from app.store.base import Store


def open_store(settings: Settings, facet_index: bool = True, check_settings: bool = True) -> Store:
    """`facet_index`: the embedded store's in-memory facets (for serving; a one-shot command
    would only pay for loading them). `check_settings=False`: an embedded index written with
    other settings is opened as it is (a backup of it)."""
    if settings.qdrant_url:
        from app.store.server import ServerStore

        return ServerStore.from_settings(settings.qdrant_url, settings.collection, settings)
    from app.store.edge import EdgeStore

    return EdgeStore(
        settings.data_dir,
        settings.collection,
        settings.min_free_bytes,
        facet_index,
        check_settings=check_settings,
    )
