"""The store's error seam: whatever an engine or its client raises leaves the store as one of
these, each mapped to one HTTP status by the error tree (`app.errors`)."""

import functools
import logging
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from app.errors import ServiceError, Unavailable

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")


class StoreError(ServiceError):
    """The engine failed in a way the client cannot fix: a 500 without the engine's words."""

    code = "engine_error"
    public = False


class EngineUnavailable(StoreError, Unavailable):
    """The engine cannot be reached (server mode: down, restarting, network): 503."""

    code = "engine_unavailable"
    public = True


class EngineFailed(StoreError):
    """Server mode: Qdrant answered with an error this service did not expect: 502."""

    status_code = 502
    code = "engine_failed"
    public = True  # raised with a fixed message; the engine's words go to the log


class DataDirectoryInUse(StoreError):
    """Another process holds the embedded engine's directory (one process per directory)."""

    code = "data_dir_in_use"
    public = True


class DataDirectoryUnusable(StoreError):
    """The data directory is not an index this service can open (corrupted, foreign, not a
    directory, not writable); nothing in it was changed."""

    code = "data_dir_unusable"
    public = True


class IndexOutdated(DataDirectoryUnusable):
    """The index was written with other settings or by a newer release (app.store.index_format):
    nothing was changed; the message names the command that upgrades it."""

    code = "index_outdated"


class StorageFull(StoreError):
    """The disk under the data directory is full: the write failed whole."""

    status_code = 507
    code = "storage_full"
    public = True


class CopyFailed(StoreError):
    """No copy of the index could be made (`Store.copy_to`): a Qdrant node that takes no
    snapshots, or a collection that changed during every one. Nothing was copied."""

    status_code = 409
    code = "backup_failed"
    public = True


class IndexConflict(StoreError):
    """A payload index exists with another type than the one this service needs."""

    public = True

    @classmethod
    def of_field(cls, field: str, found: object, wanted: str) -> "IndexConflict":
        return cls(
            f"payload index '{field}' exists as {found}, this service needs {wanted}: drop it"
            " or use a fresh collection"
        )


def never(_: Exception) -> bool:
    return False


def guarded(
    unreachable: Callable[[Exception], bool] = never,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Wrap a store method: errors `unreachable` recognises become EngineUnavailable, any
    other engine error a StoreError (the original chained, for the log)."""

    def decorate(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return method(*args, **kwargs)
            except ServiceError:
                raise
            except Exception as exc:
                if unreachable(exc):
                    log.warning("%s: engine unreachable: %s", method.__qualname__, exc)
                    raise EngineUnavailable("the search engine is unreachable") from exc
                raise StoreError(f"{method.__qualname__}: {type(exc).__name__}: {exc}") from exc

        return call

    return decorate
