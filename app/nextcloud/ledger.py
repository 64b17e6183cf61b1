"""What the connector knows, in one SQLite database under the data directory: connected users
(with their sealed app passwords), every node each user's walk has seen (key, path, ETag,
status), and what was written to the index per document. SQLite's journal keeps it whole
through kill -9: a restarted connector resumes from it and downloads nothing it already has.

A node's ETag is the one its content (a file) or its whole subtree (a folder) was reconciled
at; a folder's is written only once everything below it is done."""

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    user_id TEXT PRIMARY KEY,
    login_name TEXT NOT NULL,
    sealed_password TEXT NOT NULL,
    state TEXT NOT NULL,
    last_error TEXT,
    last_tick REAL,
    changed_since REAL,
    grants TEXT NOT NULL DEFAULT '[]',
    grants_read_at REAL NOT NULL DEFAULT 0,
    apps_read_at REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS nodes (
    user_id TEXT NOT NULL,
    key TEXT NOT NULL,
    path TEXT NOT NULL,
    parent TEXT NOT NULL,
    is_folder INTEGER NOT NULL,
    etag TEXT,
    status TEXT NOT NULL DEFAULT 'indexed',
    reason TEXT,
    empty_since REAL,
    PRIMARY KEY (user_id, key)
);
CREATE INDEX IF NOT EXISTS nodes_parent ON nodes (user_id, parent);
CREATE INDEX IF NOT EXISTS nodes_key ON nodes (key);
CREATE TABLE IF NOT EXISTS documents (
    doc_key TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    content_version TEXT NOT NULL,
    labels TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_source ON documents (source);
"""

USER_STATES = ("syncing", "ok", "failing", "revoked")


@dataclass(frozen=True)
class UserRecord:
    user_id: str
    login_name: str
    sealed_password: str
    state: str
    last_error: str | None
    last_tick: float | None
    changed_since: float | None
    grants: list[dict[str, str]]
    grants_read_at: float
    apps_read_at: float


@dataclass(frozen=True)
class Node:
    user_id: str
    key: str
    path: str
    parent: str
    is_folder: bool
    etag: str | None
    status: str = "indexed"  # indexed | skipped
    reason: str | None = None
    empty_since: float | None = None


@dataclass(frozen=True)
class WrittenDocument:
    """What the index holds for one document the connector wrote: where it came from (a node
    key, or an app item), the version of its content, and the labels (metadata) it carries."""

    doc_key: str
    source: str
    content_version: str
    labels: dict[str, Any]


class Ledger:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # WAL with NORMAL: a commit survives a killed process (kill -9); only a power cut may
        # lose the last ones, which the next walk finds again. FULL cost an fsync per row.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self._lock = threading.RLock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _rows(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cursor = self._db.execute(sql, tuple(args))
            cursor.row_factory = sqlite3.Row
            return cursor.fetchall()

    def _write(self, sql: str, args: Iterable[Any] = ()) -> None:
        with self._lock:
            self._db.execute(sql, tuple(args))

    # users --------------------------------------------------------------------------------

    def save_user(self, user_id: str, login_name: str, sealed_password: str) -> None:
        """Connect (or reconnect) a user: a reconnected user starts syncing again."""
        self._write(
            "INSERT INTO users (user_id, login_name, sealed_password, state) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (user_id) DO UPDATE SET login_name = excluded.login_name,"
            " sealed_password = excluded.sealed_password, state = excluded.state,"
            " last_error = NULL",
            (user_id, login_name, sealed_password, "syncing"),
        )

    def users(self) -> list[UserRecord]:
        return [_user(row) for row in self._rows("SELECT * FROM users ORDER BY user_id")]

    def user(self, user_id: str) -> UserRecord | None:
        rows = self._rows("SELECT * FROM users WHERE user_id = ?", (user_id,))
        return _user(rows[0]) if rows else None

    def grants(self, user_id: str) -> list[dict[str, str]]:
        """The user's share grants as last read (none for a user not connected)."""
        record = self.user(user_id)
        return record.grants if record else []

    def set_user(self, user_id: str, **values: Any) -> None:
        if "grants" in values:
            values["grants"] = json.dumps(values["grants"])
        columns = ", ".join(f"{name} = ?" for name in values)
        self._write(f"UPDATE users SET {columns} WHERE user_id = ?", [*values.values(), user_id])

    def forget_user(self, user_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM nodes WHERE user_id = ?", (user_id,))
            self._db.execute("DELETE FROM users WHERE user_id = ?", (user_id,))

    # nodes --------------------------------------------------------------------------------

    def node(self, user_id: str, key: str) -> Node | None:
        rows = self._rows("SELECT * FROM nodes WHERE user_id = ? AND key = ?", (user_id, key))
        return _node(rows[0]) if rows else None

    def children(self, user_id: str, parent: str) -> list[Node]:
        rows = self._rows("SELECT * FROM nodes WHERE user_id = ? AND parent = ?", (user_id, parent))
        return [_node(row) for row in rows]

    def below(self, user_id: str, folder: str) -> Iterator[Node]:
        """Every node under `folder` ("" for the root), files and folders."""
        if not folder:
            rows = self._rows("SELECT * FROM nodes WHERE user_id = ?", (user_id,))
        else:
            rows = self._rows(
                "SELECT * FROM nodes WHERE user_id = ? AND substr(path, 1, ?) = ?",
                (user_id, len(folder) + 1, folder + "/"),
            )
        return (_node(row) for row in rows)

    def files(self, user_id: str) -> Iterator[Node]:
        rows = self._rows("SELECT * FROM nodes WHERE user_id = ? AND is_folder = 0", (user_id,))
        return (_node(row) for row in rows)

    def holders(self, key: str) -> list[Node]:
        """Every user's row for one node key (a file several connected users see)."""
        return [_node(row) for row in self._rows("SELECT * FROM nodes WHERE key = ?", (key,))]

    def put_node(self, node: Node) -> None:
        self._write(
            "INSERT OR REPLACE INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                node.user_id,
                node.key,
                node.path,
                node.parent,
                int(node.is_folder),
                node.etag,
                node.status,
                node.reason,
                node.empty_since,
            ),
        )

    def drop_node(self, user_id: str, key: str) -> None:
        self._write("DELETE FROM nodes WHERE user_id = ? AND key = ?", (user_id, key))

    def figures(self, user_id: str) -> tuple[int, int, dict[str, int]]:
        """Files seen, files indexed, files skipped by reason."""
        rows = self._rows(
            "SELECT status, reason, count(*) AS n FROM nodes WHERE user_id = ? AND is_folder = 0"
            " GROUP BY status, reason",
            (user_id,),
        )
        seen = sum(row["n"] for row in rows)
        indexed = sum(row["n"] for row in rows if row["status"] == "indexed")
        skipped = {row["reason"]: row["n"] for row in rows if row["status"] == "skipped"}
        return seen, indexed, skipped

    # documents ----------------------------------------------------------------------------

    def written(self, doc_key: str) -> WrittenDocument | None:
        rows = self._rows("SELECT * FROM documents WHERE doc_key = ?", (doc_key,))
        return _written(rows[0]) if rows else None

    def written_from(self, source: str) -> list[WrittenDocument]:
        rows = self._rows("SELECT * FROM documents WHERE source = ?", (source,))
        return [_written(row) for row in rows]

    def written_from_prefix(self, prefix: str) -> list[WrittenDocument]:
        rows = self._rows(
            "SELECT * FROM documents WHERE substr(source, 1, ?) = ?", (len(prefix), prefix)
        )
        return [_written(row) for row in rows]

    def put_written(self, document: WrittenDocument) -> None:
        self._write(
            "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?)",
            (
                document.doc_key,
                document.source,
                document.content_version,
                json.dumps(document.labels, sort_keys=True),
            ),
        )

    def drop_written(self, doc_key: str) -> None:
        self._write("DELETE FROM documents WHERE doc_key = ?", (doc_key,))


def _user(row: sqlite3.Row) -> UserRecord:
    values = dict(row)
    values["grants"] = json.loads(values["grants"])
    return UserRecord(**values)


def _node(row: sqlite3.Row) -> Node:
    values = dict(row)
    values["is_folder"] = bool(values["is_folder"])
    return Node(**values)


def _written(row: sqlite3.Row) -> WrittenDocument:
    values = dict(row)
    values["labels"] = json.loads(values["labels"])
    return WrittenDocument(**values)
