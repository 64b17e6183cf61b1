"""Fault injection and the request log of the dialect.

Faults are what a real Nextcloud behind a proxy does on a bad day, each matched by method,
path prefix and user and used once or for N requests:

- "empty_207": a 207 multistatus with no <d:response> at all;
- "self_only": a PROPFIND answered as Depth 0 (only the folder itself, no children);
- "not_found": 404 (sabre/dav's NotFound body), e.g. a folder vanishing mid-walk;
- "status": any status (429 and 503 with Retry-After: Nextcloud's rate limiting and
  maintenance mode, https://docs.nextcloud.com/server/latest/admin_manual/configuration_server/oc_ratelimit.html);
- "unauthorized": 401 as for a revoked app password;
- "slow_body": the real answer, its body trickling in `chunk` bytes every `delay` seconds;
- "reset": the real answer's headers and part of its body, then the connection closed.

The log keeps one record per request (method, path, depth, status, user, bytes sent), written
when the response starts and completed before its last byte goes out, so a client that has read
a whole response always finds its record.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal

FaultKind = Literal[
    "empty_207", "self_only", "not_found", "status", "unauthorized", "slow_body", "reset"
]


@dataclass
class Fault:
    kind: FaultKind
    method: str | None = None
    path_prefix: str = "/"
    user: str | None = None
    times: int | None = 1
    status: int = 503
    retry_after: int | None = None
    delay: float = 0.2
    chunk: int = 16
    after_bytes: int = 64
    hits: int = 0

    def matches(self, method: str, path: str, uid: str | None) -> bool:
        return (
            (self.method is None or self.method == method)
            and path.startswith(self.path_prefix)
            and (self.user is None or self.user == uid)
            and (self.times is None or self.times > 0)
        )


@dataclass
class Record:
    method: str
    path: str
    depth: str | None
    status: int
    user: str | None
    bytes: int = 0
    fault: str | None = None
    peer: str | None = None  # the client's address and port: one per connection


@dataclass
class RequestLog:
    records: list[Record] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, record: Record) -> Record:
        with self.lock:
            self.records.append(record)
        return record

    def reset(self) -> None:
        with self.lock:
            self.records.clear()

    def snapshot(self) -> list[Record]:
        with self.lock:
            return list(self.records)

    def count(
        self, method: str | None = None, path_prefix: str = "/", user: str | None = None
    ) -> int:
        return len(self.select(method, path_prefix, user))

    def select(
        self, method: str | None = None, path_prefix: str = "/", user: str | None = None
    ) -> list[Record]:
        return [
            r
            for r in self.snapshot()
            if (method is None or r.method == method)
            and r.path.startswith(path_prefix)
            and (user is None or r.user == user)
        ]

    def counters(self) -> dict[str, int]:
        """Requests by method, plus "total" and "bytes"."""
        out: dict[str, int] = {"total": 0, "bytes": 0}
        for r in self.snapshot():
            out[r.method] = out.get(r.method, 0) + 1
            out["total"] += 1
            out["bytes"] += r.bytes
        return out


class Faults:
    def __init__(self) -> None:
        self.rules: list[Fault] = []
        self.lock = threading.Lock()

    def add(self, fault: Fault) -> Fault:
        with self.lock:
            self.rules.append(fault)
        return fault

    def clear(self) -> None:
        with self.lock:
            self.rules.clear()

    def take(self, method: str, path: str, uid: str | None) -> Fault | None:
        """The first rule matching this request, its use counted."""
        with self.lock:
            for rule in self.rules:
                if rule.matches(method, path, uid):
                    rule.hits += 1
                    if rule.times is not None:
                        rule.times -= 1
                    return rule
            return None
