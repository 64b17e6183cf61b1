"""One user's HTTP to Nextcloud, against the dialect's faults: what is retried, what is raised."""

from __future__ import annotations

import socket

import pytest

from app.nextcloud.client import NextcloudClient
from app.nextcloud.errors import AppMissing, Refused, Revoked, Unreachable
from tests.nextcloud.conftest import ALICE, ALICE_LOGIN
from tests.nextcloud.dialect import NextcloudDialect


def client_of(nc: NextcloudDialect, slept: list[float], retries: int = 2) -> NextcloudClient:
    return NextcloudClient(
        nc.url, ALICE_LOGIN, nc.app_password(ALICE), sleep=slept.append, retries=retries
    )


def test_a_503_is_retried_after_its_retry_after_then_given_up(nc: NextcloudDialect) -> None:
    slept: list[float] = []
    nc.fault("status", method="PROPFIND", status=503, retry_after=3, times=None)
    with client_of(nc, slept) as client, pytest.raises(Unreachable, match="after retries"):
        client.user_id()
    assert slept == [3.0, 3.0]


def test_a_retry_after_too_long_ends_at_once(nc: NextcloudDialect) -> None:
    slept: list[float] = []
    nc.fault("status", method="PROPFIND", status=429, retry_after=3600, times=None)
    with client_of(nc, slept) as client, pytest.raises(Unreachable):
        client.user_id()
    assert slept == []


def test_downloads_and_ocs_raise_what_the_caller_tells_apart(nc: NextcloudDialect) -> None:
    slept: list[float] = []
    with client_of(nc, slept) as client:
        with pytest.raises(Refused), client.stream(f"/remote.php/dav/files/{ALICE}/none.txt"):
            pass
        with pytest.raises(AppMissing):
            client.ocs("apps/not-installed/api/v1/things")
        nc.fault("status", path_prefix="/ocs/", status=400)
        with pytest.raises(Refused):
            client.ocs("apps/files_sharing/api/v1/shares")
    with client_of(nc, slept) as client:
        nc.fault("unauthorized", path_prefix="/remote.php/dav/files/")
        with pytest.raises(Revoked), client.stream(f"/remote.php/dav/files/{ALICE}/x.txt"):
            pass


def test_no_answer_at_all_is_unreachable(nc: NextcloudDialect) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    slept: list[float] = []
    client = NextcloudClient(f"http://127.0.0.1:{port}", "a", "b", sleep=slept.append, retries=1)
    with client:
        with pytest.raises(Unreachable):
            client.user_id()
        with pytest.raises(Unreachable), client.stream("/x"):
            pass
    assert slept == [1.0]
