"""The world a Nextcloud instance holds: users, groups, app passwords, file trees, shares, tags.

What it follows, and where:

- Users have a uid and a login name that may differ (an LDAP login "alice@example.org" for the
  uid "alice-uuid"); clients authenticate with the login name and an app password, and build DAV
  paths from the uid: https://docs.nextcloud.com/server/latest/developer_manual/client_apis/LoginFlow/index.html
  ("Keep in mind that this is the loginname and could be different from the username").
- ETag propagation is Nextcloud's propagator: a change to a node gives the node a new ETag and
  gives every ancestor folder up to the user's root one new ETag (all the same), sets their mtime
  to max(mtime, now) and adds the size difference (lib/private/Files/Cache/Propagator.php and
  Updater.php in nextcloud/server). A move keeps the node's fileid, ETag and mtime and propagates
  from both the old and the new place (Updater::renameFromStorage). A move across owners (out
  of a received share) is a copy plus a delete in Nextcloud: new fileids.
- A folder holding mount points (a recipient's root holding received shares) shows the ETag
  md5(etag + "::" + "::".join("/<mount name>/" + mount root etag + permissions)), its size plus
  the mounts' sizes and the newest mtime (lib/private/Files/FileInfo.php, getEtag/addSubEntry),
  so the recipient's root ETag changes when a share appears, goes, changes permissions or
  changes inside.
- Assigning a system tag changes no ETag (nextcloud/server issue #8477, open): only a webhook
  or a tag query tells a client about it.
- Shares follow https://docs.nextcloud.com/server/latest/developer_manual/client_apis/OCS/ocs-share-api.html:
  user (0), group (1) and link (3) shares, permissions 1/2/4/8/16; a user or group share mounts
  the node at the recipient's root under its name, or "name (2)" when that is taken; deleting a
  node deletes the shares on it and below it.
"""

from __future__ import annotations

import hashlib
import itertools
import mimetypes
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

SHARE_USER = 0
SHARE_GROUP = 1
SHARE_LINK = 3
PERMISSION_READ, PERMISSION_UPDATE, PERMISSION_CREATE = 1, 2, 4
PERMISSION_DELETE, PERMISSION_SHARE, PERMISSION_ALL = 8, 16, 31
FOLDER_MIME = "httpd/unix-directory"
INSTANCE_ID = "ocnca1b2c3d4"

Event = dict[str, Any]


class Clock:
    """Seconds since the epoch; real time unless frozen, so tests can step it."""

    def __init__(self) -> None:
        self._frozen: int | None = None

    def now(self) -> int:
        return int(time.time()) if self._frozen is None else self._frozen

    def freeze(self, at: int | None = None) -> int:
        self._frozen = self.now() if at is None else at
        return self._frozen

    def advance(self, seconds: int) -> int:
        self._frozen = self.now() + seconds
        return self._frozen


class _Uniqid:
    """PHP's uniqid(): 8 hex digits of seconds, 5 of microseconds; strictly increasing here."""

    def __init__(self) -> None:
        self._last = 0

    def __call__(self) -> str:
        self._last = max(int(time.time() * 1_000_000), self._last + 1)
        return f"{self._last // 1_000_000:08x}{self._last % 1_000_000:05x}"


@dataclass(eq=False)
class User:
    uid: str
    login: str
    display_name: str
    password: str
    email: str
    groups: set[str] = field(default_factory=set)


@dataclass(eq=False)
class Node:
    fileid: int
    name: str
    owner: str
    is_dir: bool
    parent: Node | None
    etag: str
    mtime: int
    ctime: int
    content_type: str = FOLDER_MIME
    data: bytes = b""
    size: int = 0
    children: dict[str, Node] = field(default_factory=dict)
    tags: set[int] = field(default_factory=set)
    encrypted: bool = False

    @property
    def path(self) -> str:
        """The path below the owner's root, without leading slash ("" for the root)."""
        names: list[str] = []
        node: Node | None = self
        while node is not None and node.parent is not None:
            names.append(node.name)
            node = node.parent
        return "/".join(reversed(names))

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children.values():
            yield from child.walk()


@dataclass(eq=False)
class SystemTag:
    id: int
    name: str
    user_visible: bool = True
    user_assignable: bool = True


@dataclass(eq=False)
class Share:
    id: int
    share_type: int
    owner: str
    node: Node
    share_with: str | None
    permissions: int
    stime: int
    token: str | None = None
    note: str = ""
    targets: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Located:
    """A node as one user sees it: through their own tree or through a received share."""

    node: Node
    view_path: str
    share: Share | None = None

    @property
    def is_mount_root(self) -> bool:
        return self.share is not None and self.node is self.share.node


def guess_type(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


class World:
    """Everything the dialect serves; every method takes the lock (the server is a thread)."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.lock = threading.RLock()
        self.clock = clock or Clock()
        self.uniqid = _Uniqid()
        self.users: dict[str, User] = {}
        self.groups: dict[str, set[str]] = {}
        self.app_passwords: dict[str, str] = {}  # token -> uid
        self.revoked: set[str] = set()
        self.roots: dict[str, Node] = {}
        self.by_id: dict[int, Node] = {}
        self.tags: dict[int, SystemTag] = {}
        self.shares: dict[int, Share] = {}
        self.shares_on: dict[int, list[Share]] = {}  # fileid -> shares of that node
        self.listeners: list[Callable[[Event], None]] = []
        self._ids = itertools.count(1)
        self._share_ids = itertools.count(1)
        self._tag_ids = itertools.count(1)

    # users, groups, credentials --------------------------------------------------------------

    def add_user(
        self,
        uid: str,
        login: str | None = None,
        display_name: str | None = None,
        groups: tuple[str, ...] = (),
        password: str | None = None,
    ) -> User:
        with self.lock:
            user = User(
                uid,
                login or uid,
                display_name or uid,
                password or secrets.token_hex(8),
                f"{uid}@example.org",
            )
            self.users[uid] = user
            now = self.clock.now()
            self.roots[uid] = self._new_node("", uid, True, None, now)
            for gid in groups:
                self.add_to_group(gid, uid)
            return user

    def add_to_group(self, gid: str, uid: str) -> None:
        with self.lock:
            self.groups.setdefault(gid, set()).add(uid)
            self.users[uid].groups.add(gid)

    def remove_from_group(self, gid: str, uid: str) -> None:
        with self.lock:
            self.groups.get(gid, set()).discard(uid)
            self.users[uid].groups.discard(gid)

    def issue_app_password(self, uid: str) -> str:
        with self.lock:
            token = secrets.token_urlsafe(54)[:72]
            self.app_passwords[token] = uid
            return token

    def revoke(self, app_password: str) -> None:
        with self.lock:
            self.revoked.add(app_password)

    def authenticate(self, login: str, password: str) -> User | None:
        """The user whose login name and (app) password these are, or None."""
        with self.lock:
            user = next((u for u in self.users.values() if u.login == login), None)
            if user is None or password in self.revoked:
                return None
            if self.app_passwords.get(password) == user.uid or password == user.password:
                return user
            return None

    # lookups -------------------------------------------------------------------------------

    def node(self, uid: str, path: str) -> Node:
        """The node at `path` in uid's own tree (KeyError if none)."""
        with self.lock:
            node = self.roots[uid]
            for name in _split(path):
                node = node.children[name]
            return node

    def mounts(self, uid: str) -> dict[str, Share]:
        """The shares mounted at uid's root, by mount name."""
        with self.lock:
            user = self.users[uid]
            out: dict[str, Share] = {}
            for share in sorted(self.shares.values(), key=lambda s: s.id):
                received = (share.share_type == SHARE_USER and share.share_with == uid) or (
                    share.share_type == SHARE_GROUP and share.share_with in user.groups
                )
                if received and share.owner != uid:
                    out[self._target(share, uid)] = share
            return out

    def locate(self, uid: str, path: str) -> Located | None:
        """What uid sees at `path` of their files (own nodes first, then received shares)."""
        with self.lock:
            names = _split(path)
            node: Node | None = self.roots[uid]
            share: Share | None = None
            for i, name in enumerate(names):
                assert node is not None
                child = node.children.get(name) if node.is_dir else None
                if child is None and i == 0 and share is None:
                    share = self.mounts(uid).get(name)
                    child = share.node if share else None
                if child is None:
                    return None
                node = child
            assert node is not None
            return Located(node, "/".join(names), share)

    def children(self, uid: str, loc: Located) -> list[Located]:
        with self.lock:
            prefix = f"{loc.view_path}/" if loc.view_path else ""
            out = [Located(c, prefix + c.name, loc.share) for c in loc.node.children.values()]
            if loc.node is self.roots[uid]:
                mounted = self.mounts(uid).items()
                out += [Located(s.node, name, s) for name, s in mounted]
            return out

    def seen(self, uid: str, loc: Located) -> tuple[str, int, int]:
        """(etag, size, mtime) of a node as uid sees it: a root folds its mounts in."""
        with self.lock:
            node = loc.node
            if node is not self.roots.get(uid):
                return node.etag, node.size, node.mtime
            mounted = self.mounts(uid)
            if not mounted:
                return node.etag, node.size, node.mtime
            parts = [f"/{n}/{s.node.etag}{s.permissions}" for n, s in mounted.items()]
            etag = hashlib.md5("::".join([node.etag, *parts]).encode()).hexdigest()
            size = node.size + sum(s.node.size for s in mounted.values())
            mtime = max([node.mtime, *(s.node.mtime for s in mounted.values())])
            return etag, size, mtime

    def permissions(self, loc: Located) -> int:
        base = PERMISSION_ALL if loc.share is None else loc.share.permissions
        return base if loc.node.is_dir else base & ~PERMISSION_CREATE

    # changes ------------------------------------------------------------------------------

    def mkdir(self, uid: str, path: str, actor: str | None = None) -> Node:
        """Create the folder at `path` in uid's tree, with any missing parent."""
        with self.lock:
            node = self.roots[uid]
            for name in _split(path):
                child = node.children.get(name)
                node = child if child is not None else self.create(node, name, True, actor=actor)
            return node

    def put(
        self,
        uid: str,
        path: str,
        data: bytes,
        content_type: str | None = None,
        mtime: int | None = None,
        actor: str | None = None,
    ) -> Node:
        """Create or overwrite the file at `path` in uid's tree (parents are created)."""
        with self.lock:
            names = _split(path)
            parent = self.mkdir(uid, "/".join(names[:-1]), actor=actor)
            existing = parent.children.get(names[-1])
            if existing is not None:
                self.write(existing, data, content_type, mtime, actor=actor)
                return existing
            return self.create(parent, names[-1], False, data, content_type, mtime, actor=actor)

    def create(
        self,
        parent: Node,
        name: str,
        is_dir: bool,
        data: bytes = b"",
        content_type: str | None = None,
        mtime: int | None = None,
        actor: str | None = None,
    ) -> Node:
        with self.lock:
            now = self.clock.now()
            node = self._new_node(name, parent.owner, is_dir, parent, mtime or now)
            if not is_dir:
                node.content_type = content_type or guess_type(name)
                node.data, node.size = data, len(data)
            node.encrypted = parent.encrypted
            parent.children[name] = node
            self._propagate(parent, node.size)
            self._emit(
                "OCP\\Files\\Events\\Node\\NodeCreatedEvent",
                actor or node.owner,
                node=self._ref(node),
            )
            return node

    def write(
        self,
        node: Node,
        data: bytes,
        content_type: str | None = None,
        mtime: int | None = None,
        actor: str | None = None,
    ) -> None:
        with self.lock:
            diff = len(data) - node.size
            node.data, node.size = data, len(data)
            node.content_type = content_type or node.content_type
            node.etag, node.mtime = self.uniqid(), mtime or self.clock.now()
            self._propagate(node.parent, diff)
            self._emit(
                "OCP\\Files\\Events\\Node\\NodeWrittenEvent",
                actor or node.owner,
                node=self._ref(node),
            )

    def delete(self, node: Node, actor: str | None = None) -> None:
        with self.lock:
            assert node.parent is not None, "a user's root cannot be deleted"
            who = actor or node.owner
            self._emit(
                "OCP\\Files\\Events\\Node\\BeforeNodeDeletedEvent", who, node=self._ref(node)
            )
            ref = {"path": self._ref(node)["path"]}
            del node.parent.children[node.name]
            for gone in node.walk():
                self.by_id.pop(gone.fileid, None)
                for share in self.shares_on.pop(gone.fileid, []):
                    self.shares.pop(share.id, None)
            self._propagate(node.parent, -node.size)
            self._emit("OCP\\Files\\Events\\Node\\NodeDeletedEvent", who, node=ref)

    def move(self, node: Node, parent: Node, name: str, actor: str | None = None) -> Node:
        """Move `node` into `parent` as `name`; the same owner keeps the fileid."""
        with self.lock:
            assert node.parent is not None
            who = actor or node.owner
            if parent.owner != node.owner:
                return self._copy_across(node, parent, name, who)
            source = self._ref(node)
            self._emit(
                "OCP\\Files\\Events\\Node\\BeforeNodeRenamedEvent",
                who,
                source=source,
                target={"path": self._ref(parent)["path"].rstrip("/") + "/" + name},
            )
            old_parent = node.parent
            del old_parent.children[node.name]
            self._propagate(old_parent, -node.size)
            node.name, node.parent = name, parent
            parent.children[name] = node
            self._propagate(parent, node.size)
            self._emit(
                "OCP\\Files\\Events\\Node\\NodeRenamedEvent",
                who,
                source={"path": source["path"]},
                target=self._ref(node),
            )
            return node

    def _copy_across(self, node: Node, parent: Node, name: str, actor: str) -> Node:
        copy = self.create(
            parent, name, node.is_dir, node.data, node.content_type, node.mtime, actor=actor
        )
        for child in list(node.children.values()):
            self._copy_across(child, copy, child.name, actor)
        self.delete(node, actor=actor)
        return copy

    def _propagate(self, folder: Node | None, size_diff: int) -> None:
        etag, now = self.uniqid(), self.clock.now()
        while folder is not None:
            folder.etag, folder.mtime = etag, max(folder.mtime, now)
            folder.size += size_diff
            folder = folder.parent

    def _new_node(
        self, name: str, owner: str, is_dir: bool, parent: Node | None, mtime: int
    ) -> Node:
        node = Node(
            next(self._ids), name, owner, is_dir, parent, self.uniqid(), mtime, self.clock.now()
        )
        self.by_id[node.fileid] = node
        return node

    # system tags, encryption --------------------------------------------------------------

    def create_tag(
        self, name: str, user_visible: bool = True, user_assignable: bool = True
    ) -> SystemTag:
        with self.lock:
            tag = SystemTag(next(self._tag_ids), name, user_visible, user_assignable)
            self.tags[tag.id] = tag
            return tag

    def assign_tag(
        self, node: Node, tag: SystemTag, actor: str | None = None, assigned: bool = True
    ) -> None:
        """Assign (or unassign) a tag: no ETag changes, as in Nextcloud."""
        with self.lock:
            (node.tags.add if assigned else node.tags.discard)(tag.id)
            kind = "TagAssignedEvent" if assigned else "TagUnassignedEvent"
            self._emit(
                f"OCP\\SystemTag\\{kind}",
                actor or node.owner,
                objectType="files",
                objectIds=[str(node.fileid)],
                tagIds=[tag.id],
            )

    def set_encrypted(self, node: Node, encrypted: bool = True) -> None:
        """Mark an end-to-end encrypted folder (and what it holds) or file."""
        with self.lock:
            for inner in node.walk():
                inner.encrypted = encrypted

    # shares -------------------------------------------------------------------------------

    def share(
        self,
        owner: str,
        path: str,
        share_type: int,
        share_with: str | None = None,
        permissions: int | None = None,
        note: str = "",
    ) -> Share:
        with self.lock:
            node = self.node(owner, path)
            if share_type in (SHARE_USER, SHARE_GROUP) and not share_with:
                raise ValueError("a user or group share needs share_with")
            if permissions is None:
                permissions = PERMISSION_READ if share_type == SHARE_LINK else PERMISSION_ALL
            if not node.is_dir:
                permissions &= ~(PERMISSION_CREATE | PERMISSION_DELETE)
            token = secrets.token_urlsafe(11)[:15] if share_type == SHARE_LINK else None
            share = Share(
                next(self._share_ids),
                share_type,
                owner,
                node,
                share_with,
                permissions,
                self.clock.now(),
                token,
                note,
            )
            self.shares[share.id] = share
            self.shares_on.setdefault(node.fileid, []).append(share)
            return share

    def unshare(self, share_id: int) -> None:
        with self.lock:
            share = self.shares.pop(share_id)
            self.shares_on[share.node.fileid].remove(share)

    def set_share_permissions(self, share_id: int, permissions: int) -> None:
        with self.lock:
            self.shares[share_id].permissions = permissions

    def recipients(self, share: Share) -> list[str]:
        with self.lock:
            if share.share_type == SHARE_USER and share.share_with:
                return [share.share_with]
            if share.share_type == SHARE_GROUP and share.share_with:
                return sorted(self.groups.get(share.share_with, set()) - {share.owner})
            return []

    def _target(self, share: Share, uid: str) -> str:
        """The name a share is mounted under at uid's root, fixed the first time it is seen."""
        if uid not in share.targets:
            taken = set(self.roots[uid].children) | {
                t
                for s in self.shares.values()
                if s is not share
                for r, t in s.targets.items()
                if r == uid
            }
            name, n = share.node.name, 2
            stem, dot, ext = name.rpartition(".") if not share.node.is_dir else ("", "", "")
            candidate = name
            while candidate in taken:
                candidate = f"{stem} ({n}).{ext}" if dot and stem else f"{name} ({n})"
                n += 1
            share.targets[uid] = candidate
        return share.targets[uid]

    # events -------------------------------------------------------------------------------

    def _ref(self, node: Node) -> dict[str, Any]:
        path = node.path
        return {"id": node.fileid, "path": f"/{node.owner}/files" + (f"/{path}" if path else "")}

    def _emit(self, cls: str, actor: str | None, **fields: Any) -> None:
        self.emit(cls, actor, **fields)

    def emit(self, cls: str, actor: str | None, **fields: Any) -> None:
        """Hand a webhook_listeners envelope for an event to every listener."""
        user = self.users.get(actor) if actor else None
        envelope: Event = {
            "event": {"class": cls, **fields},
            "user": {"uid": user.uid, "displayName": user.display_name} if user else None,
            "time": self.clock.now(),
        }
        for listener in list(self.listeners):
            listener(envelope)


def _split(path: str) -> list[str]:
    return [p for p in path.strip("/").split("/") if p]


def padded_id(fileid: int) -> str:
    """oc:id and OC-FileId: the fileid padded to 8 digits, then the instance id."""
    return f"{fileid:08d}{INSTANCE_ID}"
