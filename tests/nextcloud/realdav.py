"""Two real third-party DAV servers on loopback ports, for what the dialect cannot prove.

- WsgiDAV (https://wsgidav.readthedocs.io/en/latest/user_guide_configure.html): its filesystem
  provider over a folder, Basic auth by the simple domain controller, served by cheroot.
- Radicale (https://radicale.org/v3.html#configuration): CalDAV/CardDAV with htpasswd auth
  ("plain" encryption) and its filesystem storage in a folder, its WSGI application served
  by cheroot.

Both run in a thread of the test process and stop with their sockets closed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cheroot import wsgi


@dataclass(frozen=True)
class RealDav:
    url: str
    user: str
    password: str
    root: Path


@contextmanager
def _serve(app: Any) -> Iterator[str]:
    server = wsgi.Server(("127.0.0.1", 0), app, numthreads=4, shutdown_timeout=2)
    server.prepare()
    host, port = server.bind_addr[:2]
    thread = threading.Thread(target=server.serve, name="real-dav", daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        thread.join(10)


@contextmanager
def wsgidav_server(
    root: Path, user: str = "alice", password: str = "wonderland"
) -> Iterator[RealDav]:
    from wsgidav.wsgidav_app import WsgiDAVApp

    config = {
        "provider_mapping": {"/": str(root)},
        "http_authenticator": {
            "domain_controller": None,
            "accept_basic": True,
            "accept_digest": False,
            "default_to_digest": False,
        },
        "simple_dc": {"user_mapping": {"*": {user: {"password": password}}}},
        "verbose": 0,
        "logging": {"enable": False},
        "property_manager": True,
        "lock_storage": True,
        "dir_browser": {"enable": False},
    }
    with _serve(WsgiDAVApp(config)) as url:
        yield RealDav(url, user, password, root)


@contextmanager
def radicale_server(
    root: Path, user: str = "alice", password: str = "wonderland"
) -> Iterator[RealDav]:
    import radicale.config
    from radicale.app import Application

    users = root / "users"
    users.write_text(f"{user}:{password}\n")
    configuration = radicale.config.load()
    configuration.update(
        {
            "auth": {
                "type": "htpasswd",
                "htpasswd_filename": str(users),
                "htpasswd_encryption": "plain",
                "delay": "0",
            },
            "storage": {"filesystem_folder": str(root / "collections")},
            "rights": {"type": "owner_only"},
            "web": {"type": "none"},
        },
        "astrolabe tests",
    )
    with _serve(Application(configuration)) as url:
        yield RealDav(url, user, password, root)
