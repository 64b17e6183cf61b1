"""The ETag walk of one user's files.

Nextcloud changes a folder's ETag whenever anything below it changes (and a user's root ETag
when a share mounted in it appears, goes or changes), so a walk is one `PROPFIND Depth: 0` on
the root when nothing changed, and otherwise `Depth: 1` only into the folders whose ETag
changed. A folder's new ETag is recorded once everything below it is done (post-order), and
only if the whole walk went through, so a walk cut short (kill -9, a fault) is resumed by the
next one and nothing below an unrecorded folder is missed.

Where folders have no ETag (generic WebDAV: WsgiDAV, Apache) every folder is listed, and the
files are compared one by one: the full-listing fallback.

Deletions wait for the end of the walk (a file that left one folder may show up in another: a
move, which keeps the fileid), and a folder that suddenly lists empty while it held files is
listed again on the next walk before anything below it is deleted."""

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from app.nextcloud.client import NextcloudClient, dav_quote
from app.nextcloud.dav import WALK_BODY, DavEntry, parse_multistatus
from app.nextcloud.errors import AppMissing, Refused
from app.nextcloud.ledger import Ledger, Node

ROOT_KEY, ROOT_PARENT = ":root", "/"


class Sink(Protocol):
    """Where the walk's findings go; each call returns once they are handled (durably)."""

    def files_changed(self, entries: list[DavEntry]) -> None:
        """New files, files whose ETag, tags or place changed: their node rows are written
        once each is read (or skipped)."""

    def files_moved(self, nodes: list[Node]) -> None:
        """Files whose path changed because a folder above them moved (rows already updated)."""

    def nodes_gone(self, nodes: list[Node]) -> None:
        """Nodes no longer listed anywhere (rows still present: the sink drops them)."""


@dataclass
class WalkReport:
    changed: bool = False  # the root's ETag moved (or there is none)
    complete: bool = True
    requests: int = 0
    folders_listed: int = 0
    new_mounts: int = 0  # shares received since the last walk: the share lists changed
    errors: list[str] = field(default_factory=list)


class Walker:
    def __init__(
        self,
        client: NextcloudClient,
        ledger: Ledger,
        user_id: str,
        root: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client, self.ledger, self.user_id = client, ledger, user_id
        inner = root.strip("/")
        self.root = f"/{inner}/" if inner else "/"  # the files home's URL path
        self.clock = clock

    def list(self, path: str, depth: int) -> list[DavEntry]:
        url = dav_quote(self.root + path + ("/" if path else ""))
        response = self.client.request(
            "PROPFIND",
            url,
            content=WALK_BODY,
            headers={"Depth": str(depth), "Content-Type": "application/xml"},
        )
        if response.status_code == 404:
            raise AppMissing(f"PROPFIND {path!r}: 404")
        if response.status_code != 207:
            raise Refused(f"PROPFIND {path!r}: HTTP {response.status_code}")
        return parse_multistatus(response.content, self.root)

    def walk(self, sink: Sink) -> WalkReport:
        report = WalkReport()
        top = self.list("", 0)
        report.requests += 1
        root_entry = next((e for e in top if e.path == ""), None)
        if root_entry is None:
            report.complete = False
            report.errors.append("the root's PROPFIND answered no root")
            return report
        root_row = self.ledger.node(self.user_id, ROOT_KEY)
        if root_row and root_entry.etag and root_row.etag == root_entry.etag:
            return report
        report.changed = True
        _Walk(self, sink, report).run(root_entry.etag)
        return report


class _Walk:
    """One walk's working state: the folders still to list, what vanished, what was seen."""

    def __init__(self, walker: Walker, sink: Sink, report: WalkReport) -> None:
        self.w, self.sink, self.report = walker, sink, report
        self.ledger, self.user_id = walker.ledger, walker.user_id
        self.seen: set[str] = set()
        self.vanished: list[Node] = []
        self.finished: list[tuple[str, str | None]] = []  # (path, etag) in post-order

    def run(self, root_etag: str | None) -> None:
        stack: list[tuple[str, str | None, bool]] = [("", root_etag, True), ("", None, False)]
        while stack:
            path, etag, finish = stack.pop()
            if finish:
                self.finished.append((path, etag))
                continue
            for child_path, child_etag in self._list_folder(path):
                stack.append((child_path, child_etag, True))
                stack.append((child_path, None, False))
        self._conclude()

    def _list_folder(self, path: str) -> list[tuple[str, str | None]]:
        """List one folder, hand its changed files to the sink; the subfolders to descend."""
        try:
            entries = self.w.list(path, 1)
        except (AppMissing, Refused) as exc:  # gone meanwhile, or a bad answer: next walk
            return self._incomplete(f"{path or '/'}: {exc}")
        finally:
            self.report.requests += 1
        self.report.folders_listed += 1
        own = next((e for e in entries if e.path == path), None)
        if own is None:  # an empty 207: no answer at all, not even the folder
            return self._incomplete(f"{path or '/'}: an empty multistatus")
        children = [e for e in entries if e.path != path and e.path.rpartition("/")[0] == path]
        stored = {n.key: n for n in self.ledger.children(self.user_id, path)}
        if not children and stored and self._suddenly_empty(path, own):
            return []
        descend, changed_files = self._compare(path, children, stored)
        self.sink.files_changed(changed_files)
        listed = {e.key for e in children}
        self.vanished += [n for k, n in stored.items() if k not in listed]
        return descend

    def _compare(
        self, path: str, children: list[DavEntry], stored: dict[str, Node]
    ) -> tuple[list[tuple[str, str | None]], list[DavEntry]]:
        descend: list[tuple[str, str | None]] = []
        changed_files: list[DavEntry] = []
        for child in children:
            self.seen.add(child.key)
            old = stored.get(child.key) or self.ledger.node(self.user_id, child.key)
            self.report.new_mounts += int(old is None and child.mount_root)
            if not child.is_folder:
                if old is None or old.etag != child.etag or old.path != child.path:
                    changed_files.append(child)
                continue
            if old is not None and old.path != child.path:
                self._move_subtree(old, child.path)
            if old is None or old.etag is None or child.etag is None or old.etag != child.etag:
                descend.append((child.path, child.etag))
            self.ledger.put_node(
                Node(self.user_id, child.key, child.path, path, True, old.etag if old else None)
                if old is None
                else replace(old, path=child.path, parent=path)
            )
        return descend, changed_files

    def _suddenly_empty(self, path: str, own: DavEntry) -> bool:
        """A folder that held files lists empty: believed only when it does so twice."""
        key = own.key if path else ROOT_KEY
        row = self.ledger.node(self.user_id, key)
        if row is not None and row.empty_since is not None:
            return False  # the second time: true
        base = row or Node(self.user_id, key, path, ROOT_PARENT if not path else "", True, None)
        self.ledger.put_node(replace(base, empty_since=self.w.clock()))
        self._incomplete(f"{path or '/'}: listed empty, checked again next time")
        return True

    def _move_subtree(self, old: Node, new_path: str) -> None:
        moved = []
        for node in self.ledger.below(self.user_id, old.path):
            path = new_path + node.path[len(old.path) :]
            parent = new_path + node.parent[len(old.path) :]
            updated = replace(node, path=path, parent=parent)
            self.ledger.put_node(updated)
            if not node.is_folder:
                moved.append(updated)
        self.sink.files_moved(moved)

    def _incomplete(self, error: str) -> list[tuple[str, str | None]]:
        self.report.complete = False
        self.report.errors.append(error)
        return []

    def _conclude(self) -> None:
        gone: dict[str, Node] = {}
        for node in self.vanished:
            if node.key in self.seen:
                continue
            gone[node.key] = node
            if node.is_folder:
                for below in self.ledger.below(self.user_id, node.path):
                    if below.key not in self.seen:
                        gone[below.key] = below
        if gone:
            self.sink.nodes_gone(list(gone.values()))
        if self.report.complete:
            self._record_etags()

    def _record_etags(self) -> None:
        for path, etag in self.finished:
            if not path:
                key, parent = ROOT_KEY, ROOT_PARENT
            else:
                row = next((n for n in self._rows_at(path)), None)
                if row is None:
                    continue
                key, parent = row.key, row.parent
            self.ledger.put_node(Node(self.user_id, key, path, parent, True, etag))

    def _rows_at(self, path: str) -> list[Node]:
        parent = path.rpartition("/")[0]
        return [n for n in self.ledger.children(self.user_id, parent) if n.path == path]
