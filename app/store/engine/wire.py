"""What crosses between the HTTP process and a shard server (`shard_server`), in one place: a
versioned `Call` per request, its value (`packed`: hits as columns) or a `Failure` per answer,
over a `multiprocessing.connection` on a Unix socket (pickled, authenticated with a per-run key).

The store calls a shard server answers are the `Store` protocol's methods, each in one of three
kinds (a test checks they are exactly the protocol's); the control calls are the ones the
supervisor drives a rebuild and a handover with."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from app.store import errors
from app.store.base import Hit
from app.store.translate import UntranslatableError

PROTOCOL = 3  # 3: hits cross as columns (`packed`)

# Reads take turns (`turnstile`; the searches waiting for theirs go in one call: `batching`);
# writes pass the write gate (held by a handover's seal); a copy runs beside both: it holds the
# shard's own write lock for its length, and searches go on.
READS = frozenset(
    {"query", "query_batch", "retrieve", "dense_vectors", "scroll", "scroll_page", "count", "facet"}
    | {"scroll_points", "vector_index", "ensure_room", "scratch_dir", "written_with"}
)
WRITES = frozenset({"upsert", "set_payload", "delete", "update_vectors", "record_written_with"})
COPIES = frozenset({"copy_to"})
STORE_CALLS = READS | WRITES | COPIES


class Control:
    """Calls only the supervisor makes."""

    HELLO = "hello"  # (protocol) -> {"pid", "shard"}
    START_COPY = "start_copy"  # (target) copy the shard, journal the writes from then on
    STOP_COPY = "stop_copy"  # a rebuild was abandoned: stop journaling
    PROGRESS = "progress"  # -> {"journaled"} (served) / {"applied"} (rebuilt copy)
    SHAPE = "shape"  # -> {"segments", "idle_s": since the last write, "written": points upserted}
    SEAL = "seal"  # hold every write from now on -> records journaled in all
    UNSEAL = "unseal"  # the handover was abandoned: writes go on here
    FINISH = "finish"  # (records) the copy applies the journal up to there and flushes
    RETIRE = "retire"  # every call from now on answers Moved
    SHUTDOWN = "shutdown"  # (keep_facets) close the shard and exit


CONTROLS = frozenset(value for name, value in vars(Control).items() if not name.startswith("_"))


@dataclass(frozen=True)
class Call:
    method: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


class Moved(Exception):
    """The engine that answered no longer serves the index: ask the one that does."""


@dataclass(frozen=True)
class Failure:
    kind: str  # a class of app.store.errors, or "Moved"
    message: str


@dataclass(frozen=True)
class HitColumns:
    """A list of hits as it crosses: three lists, which pickle in C, where a list of hits
    pickles hit by hit. A search's answers (its branches' candidates and its page) took 0.17
    against 0.29 ms a search to build, send and read back (users' corpus, one tag)."""

    ids: list[str]
    scores: list[float]
    payloads: list[dict[str, Any]]

    def hits(self) -> list[Hit]:
        return list(map(Hit, self.ids, self.scores, self.payloads))


def _is_hits(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and isinstance(value[0], Hit)


def packed(reply: Any) -> Any:
    """A store call's answer as it crosses: each list of hits in it (the answer itself, one of
    a batch's, the first of a page and its offset) as HitColumns."""
    if _is_hits(reply):
        return HitColumns(
            [h.id for h in reply], [h.score for h in reply], [h.payload for h in reply]
        )
    if isinstance(reply, (list, tuple)) and any(_is_hits(part) for part in reply):
        return type(reply)(packed(part) for part in reply)
    return reply


def unpacked(reply: Any) -> Any:
    """`packed` undone."""
    if isinstance(reply, HitColumns):
        return reply.hits()
    if isinstance(reply, (list, tuple)) and any(isinstance(part, HitColumns) for part in reply):
        return type(reply)(unpacked(part) for part in reply)
    return reply


_KNOWN: dict[str, type[errors.StoreError]] = {
    cls.__name__: cls
    for cls in (
        errors.StoreError,
        errors.EngineUnavailable,
        errors.EngineFailed,
        errors.DataDirectoryInUse,
        errors.DataDirectoryUnusable,
        errors.IndexOutdated,
        errors.StorageFull,
        errors.IndexConflict,
        errors.CopyFailed,
        UntranslatableError,
    )
}


def failure_of(exc: Exception) -> Failure:
    if isinstance(exc, Moved):
        return Failure("Moved", "")
    if isinstance(exc, errors.StoreError) and type(exc).__name__ in _KNOWN:
        return Failure(type(exc).__name__, exc.message)
    return Failure("StoreError", f"{type(exc).__name__}: {exc}")


def raise_failure(failure: Failure) -> NoReturn:
    if failure.kind == "Moved":
        raise Moved()
    raise _KNOWN.get(failure.kind, errors.StoreError)(failure.message)
