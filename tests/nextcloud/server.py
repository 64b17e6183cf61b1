"""NextcloudDialect: the dialect served by uvicorn on a loopback port, and its control API.

    with NextcloudDialect() as nc:
        alice = nc.add_user("alice-uuid", login="alice@example.org")
        password = nc.app_password("alice-uuid")
        nc.put("alice-uuid", "Documents/a.txt", b"hello")
        ... nc.url + "/remote.php/dav/files/alice-uuid/" ...

Each part's module names the documentation it follows: model (users, files, ETags, shares),
dav and davsearch (WebDAV), ocs (OCS, Login Flow v2), deck, caldav, webhooks, faults, asgi.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from tests.nextcloud.asgi import DialectApp
from tests.nextcloud.caldav import CalDav
from tests.nextcloud.dav import DepthInfinity
from tests.nextcloud.deck import Deck
from tests.nextcloud.faults import Fault, FaultKind, Faults, RequestLog
from tests.nextcloud.model import Clock, Event, Node, Share, SystemTag, User, World
from tests.nextcloud.ocs import LoginFlows
from tests.nextcloud.webhooks import Listener, Webhooks


class _Server(uvicorn.Server):
    """uvicorn's server, telling the starting thread when it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.ready.set()


class NextcloudDialect:
    """A Nextcloud-dialect server and the world it serves."""

    def __init__(self, depth_infinity: DepthInfinity = "allow", clock: Clock | None = None) -> None:
        self.world = World(clock)
        self.deck = Deck(self.world)
        self.caldav = CalDav(self.world)
        self.webhooks = Webhooks(self.world)
        self.flows = LoginFlows(self.world)
        self.faults = Faults()
        self.log = RequestLog()
        self.app = DialectApp(
            self.world,
            self.deck,
            self.caldav,
            self.webhooks,
            self.flows,
            self.faults,
            self.log,
            depth_infinity,
        )
        self.url = ""
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle ---------------------------------------------------------------------------

    def start(self, tls: tuple[Path, Path] | None = None, keep_alive: int = 30) -> str:
        """Listen on a free loopback port; the base URL (http://127.0.0.1:<port>, or https://
        with `tls`: a certificate and its key, PEM files). An idle connection is closed after
        `keep_alive` s: Nextcloud's Apache closes it after 5, but the tests of a kept connection
        must not be raced by the close on a loaded machine."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            lifespan="off",
            log_config=None,
            access_log=False,
            log_level="warning",
            timeout_graceful_shutdown=1,
            timeout_keep_alive=keep_alive,
            ssl_certfile=tls[0] if tls else None,
            ssl_keyfile=tls[1] if tls else None,
        )
        self._server = _Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [sock]},
            name="nextcloud-dialect",
            daemon=True,
        )
        self._thread.start()
        if not self._server.ready.wait(10):
            raise RuntimeError("the Nextcloud dialect did not start")
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
        return self.url

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)
        self._server = self._thread = None

    def __enter__(self) -> NextcloudDialect:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def dav_url(self, uid: str, path: str = "") -> str:
        return f"{self.url}/remote.php/dav/files/{uid}/{path.lstrip('/')}"

    # users --------------------------------------------------------------------------------

    def add_user(
        self,
        uid: str,
        login: str | None = None,
        display_name: str | None = None,
        groups: tuple[str, ...] = (),
    ) -> User:
        return self.world.add_user(uid, login, display_name, groups)

    def add_group(self, gid: str, *members: str) -> None:
        with self.world.lock:
            self.world.groups.setdefault(gid, set())
            for uid in members:
                self.world.add_to_group(gid, uid)

    def app_password(self, uid: str) -> str:
        return self.world.issue_app_password(uid)

    def revoke(self, app_password: str) -> None:
        self.world.revoke(app_password)

    # files --------------------------------------------------------------------------------

    def mkdir(self, uid: str, path: str) -> Node:
        return self.world.mkdir(uid, path)

    def put(
        self,
        uid: str,
        path: str,
        data: bytes,
        content_type: str | None = None,
        mtime: int | None = None,
    ) -> Node:
        return self.world.put(uid, path, data, content_type, mtime)

    def delete(self, uid: str, path: str) -> None:
        self.world.delete(self.world.node(uid, path))

    def move(self, uid: str, src: str, dst: str) -> Node:
        """Move or rename within uid's own tree (the destination's parents are created)."""
        with self.world.lock:
            parent_path, _, name = dst.strip("/").rpartition("/")
            parent = self.world.mkdir(uid, parent_path)
            return self.world.move(self.world.node(uid, src), parent, name)

    def node(self, uid: str, path: str) -> Node:
        return self.world.node(uid, path)

    def etag(self, uid: str, path: str = "") -> str:
        """The ETag uid's PROPFIND shows for `path` (unquoted)."""
        with self.world.lock:
            loc = self.world.locate(uid, path)
            if loc is None:
                raise KeyError(path)
            return self.world.seen(uid, loc)[0]

    def fileid(self, uid: str, path: str) -> int:
        loc = self.world.locate(uid, path)
        if loc is None:
            raise KeyError(path)
        return loc.node.fileid

    def tag(self, uid: str, path: str, name: str, assigned: bool = True) -> SystemTag:
        """Assign (or unassign) the system tag `name`, creating it first if needed."""
        with self.world.lock:
            tag = next((t for t in self.world.tags.values() if t.name == name), None)
            tag = tag or self.world.create_tag(name)
            self.world.assign_tag(self.world.node(uid, path), tag, assigned=assigned)
            return tag

    def set_encrypted(self, uid: str, path: str, encrypted: bool = True) -> None:
        self.world.set_encrypted(self.world.node(uid, path), encrypted)

    # shares -------------------------------------------------------------------------------

    def share(
        self,
        owner: str,
        path: str,
        share_type: int,
        share_with: str | None = None,
        permissions: int | None = None,
    ) -> Share:
        return self.world.share(owner, path, share_type, share_with, permissions)

    def unshare(self, share: Share) -> None:
        self.world.unshare(share.id)

    def set_share_permissions(self, share: Share, permissions: int) -> None:
        self.world.set_share_permissions(share.id, permissions)

    # faults, log --------------------------------------------------------------------------

    def fault(self, kind: FaultKind, **match: Any) -> Fault:
        """Inject a fault (see faults.Fault for the fields: method, path_prefix, user, times,
        status, retry_after, delay, chunk, after_bytes)."""
        return self.faults.add(Fault(kind, **match))

    def clear_faults(self) -> None:
        self.faults.clear()

    def reset_log(self) -> None:
        self.log.reset()

    # login flow, webhooks -----------------------------------------------------------------

    def grant_login(self, login_url: str, uid: str) -> str:
        """The user grants the Login Flow v2 started at `login_url`; their new app password."""
        with self.world.lock:
            return self.flows.grant(login_url, uid)

    def register_webhook(
        self, uri: str, event: str, bearer: str | None = None, **options: Any
    ) -> Listener:
        """Register a listener as an administrator would over OCS (authMethod "header")."""
        if bearer is not None:
            options.update(auth_method="header", auth_data={"Authorization": f"Bearer {bearer}"})
        return self.webhooks.register("admin", uri, event, **options)

    def run_webhook_jobs(self) -> list[int]:
        """Deliver the queued events (Nextcloud's background jobs); the receivers' statuses."""
        return self.webhooks.run_jobs()

    def deliver_webhook(self, url: str, envelope: Event, bearer: str | None = None) -> int:
        """POST one envelope now, with a bearer header as a registered listener sends it."""
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
        return self.webhooks.deliver(url, envelope, "POST", headers)

    def event(self, cls: str, actor: str | None = None, **fields: Any) -> Event:
        """An envelope for an event (and queue it for matching listeners)."""
        captured: list[Event] = []
        self.world.listeners.append(captured.append)
        try:
            self.world.emit(cls, actor, **fields)
        finally:
            self.world.listeners.remove(captured.append)
        return captured[0]
