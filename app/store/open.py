"""Choose the engine from the settings: embedded (Qdrant Edge) unless SEARCH_QDRANT_URL is set."""

from app.config import Settings
from app.store.base import Store


def open_store(settings: Settings) -> Store:
    if settings.qdrant_url:
        from app.store.server import ServerStore

        return ServerStore.from_settings(settings.qdrant_url, settings.collection, settings)
    from app.store.edge import EdgeStore

    return EdgeStore(settings.data_dir, settings.collection, settings.min_free_bytes)
