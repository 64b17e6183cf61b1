"""Fixtures: the Nextcloud dialect with three users, and the real WsgiDAV and Radicale servers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.nextcloud.model import Clock
from tests.nextcloud.realdav import RealDav, radicale_server, wsgidav_server
from tests.nextcloud.server import NextcloudDialect

ALICE, BOB, CAROL = "alice-uuid", "bob", "carol"
ALICE_LOGIN = "alice@example.org"


@pytest.fixture
def nc() -> Iterator[NextcloudDialect]:
    """The dialect on a free loopback port with a frozen clock and three users.

    alice (uid "alice-uuid", login "alice@example.org", as under LDAP) and bob are in the
    group "staff", carol is in "admin"; the clock stands still until a test advances it.
    """
    clock = Clock()
    clock.freeze(1_780_000_000)
    with NextcloudDialect(clock=clock) as dialect:
        dialect.add_user(ALICE, login=ALICE_LOGIN, display_name="Alice A.", groups=("staff",))
        dialect.add_user(BOB, display_name="Bob B.", groups=("staff",))
        dialect.add_user(CAROL, display_name="Carol C.", groups=("admin",))
        yield dialect


def client(nc: NextcloudDialect, uid: str) -> httpx.Client:
    """An httpx client authenticated as uid (login name + a new app password)."""
    login = nc.world.users[uid].login
    return httpx.Client(base_url=nc.url, auth=(login, nc.app_password(uid)), timeout=10)


@pytest.fixture
def alice(nc: NextcloudDialect) -> Iterator[httpx.Client]:
    with client(nc, ALICE) as c:
        yield c


@pytest.fixture
def bob(nc: NextcloudDialect) -> Iterator[httpx.Client]:
    with client(nc, BOB) as c:
        yield c


@pytest.fixture
def wsgidav(tmp_path: Path) -> Iterator[RealDav]:
    """A real WsgiDAV 4.4 (filesystem provider over a tmp dir, Basic auth) on loopback.

    What its PROPFIND Depth 1 shows (checked by test_realdav.py): folders have no getetag at
    all (a 404 propstat), files have one; a folder's getlastmodified is the directory's own
    mtime, which a write deep below it does not change. So nothing propagates: a connector
    has no cheap "did anything change below here?" and needs its full-listing fallback there
    (walk every folder, compare the files' ETags). Depth infinity is answered in full.
    """
    root = tmp_path / "wsgidav"
    root.mkdir()
    with wsgidav_server(root) as server:
        yield server


@pytest.fixture
def radicale(tmp_path: Path) -> Iterator[RealDav]:
    """A real Radicale 3.9 (htpasswd plain auth, filesystem storage in a tmp dir) on loopback.

    What its PROPFIND Depth 1 on a calendar home shows (checked by test_realdav.py): the home
    (the principal /<user>/) has no getetag, getctag or sync-token; each calendar has a getetag
    equal to its CS getctag and a sync-token, both changing when an event in it changes. So
    change detection is per calendar (compare each calendar's ctag or sync-token from one
    Depth 1 PROPFIND of the home, then sync-collection), never one home ETag.
    """
    root = tmp_path / "radicale"
    root.mkdir()
    with radicale_server(root) as server:
        yield server
