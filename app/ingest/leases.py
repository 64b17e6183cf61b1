"""Leases on placeholders, so that service replicas sharing one collection share its ingest queue.

A placeholder carries its lease: the replica that owns it and until when. Accepting a document
writes the lease with the placeholder; the owner renews all its leases together while it lives;
any replica takes over a placeholder whose lease expired (its owner died or hangs) and indexes it.
Taking a lease is one conditional write per point (only where the lease is free, expired or
already ours), read back to see who won: the engine applies it atomically per point, so two
replicas never both believe they hold one. A lease is an optimisation of who does the work, not
what the index ends up holding: that is guarded by fixed point ids and the revision checks of the
final swap (see `Indexer._replace`)."""

import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from qdrant_client.http import models

from app.filters import selectors
from app.store import fields
from app.store.base import Hit, Store

log = logging.getLogger(__name__)

LEASE_SECONDS = 60.0


def default_owner() -> str:
    """Containers and pods have distinct host names; a restarted one keeps its own leases."""
    return socket.gethostname()


class Leases:
    def __init__(
        self,
        store: Store,
        owner: str | None = None,
        seconds: float = LEASE_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.owner = owner or default_owner()
        self.seconds = seconds
        self._clock = clock

    def stamp(self) -> dict[str, Any]:
        """The lease a placeholder is written with."""
        return {fields.LEASE_OWNER: self.owner, fields.LEASE_UNTIL: self._clock() + self.seconds}

    def holds(self, hit: Hit) -> bool:
        return hit.payload.get(fields.LEASE_OWNER) == self.owner

    def renew(self) -> None:
        """Extend every lease this replica holds on a waiting placeholder. Holding none, it
        writes nothing: a write, even one that matches no point, clears the embedded store's
        read memo and keeps the engine from the merge it makes once writes pause."""
        held = selectors.leased_by(self.owner)
        if self.store.count(held):
            self.store.set_payload({fields.LEASE_UNTIL: self._clock() + self.seconds}, held)

    def claim(self, placeholder_ids: Sequence[str], include_own: bool = True) -> None:
        """Take the leases among these placeholders that are free or expired (or ours)."""
        if placeholder_ids:
            selector = selectors.takeable(self._clock(), self.owner, include_own, placeholder_ids)
            self.store.set_payload(self.stamp(), selector)

    def takeable(self, include_own: bool) -> models.Filter:
        """Waiting placeholders whose lease is free or expired (or ours)."""
        return selectors.takeable(self._clock(), self.owner, include_own)


class LeaseKeeper:
    """Renews this replica's leases and takes over expired ones, every third of a lease."""

    def __init__(self, leases: Leases, take_over: Callable[[], None]) -> None:
        self._leases = leases
        self._take_over = take_over
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="astrolabe-leases", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._leases.seconds / 3):
            try:
                self._leases.renew()
                self._take_over()
            except Exception:  # the engine may be briefly unreachable: try again next round
                log.exception("renewing or taking over leases failed")
