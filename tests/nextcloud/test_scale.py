"""The dialect holds a benchmark's world: 3 users x 10,000 files in 1,000 folders, with shares."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.nextcloud.model import SHARE_USER
from tests.nextcloud.server import NextcloudDialect
from tests.nextcloud.web import Request
from tests.nextcloud.xmlread import multistatus

USERS = ("u0", "u1", "u2")


@pytest.fixture(scope="module")
def big() -> Iterator[NextcloudDialect]:
    with NextcloudDialect() as nc:
        for uid in USERS:
            nc.add_user(uid)
        for uid in USERS:
            for folder in range(1000):
                for i in range(10):
                    nc.put(uid, f"top{folder // 100}/folder{folder}/file{i}.txt", b"x" * 100)
        for n, uid in enumerate(USERS):
            for top in range(10):
                nc.share(uid, f"top{top}", SHARE_USER, USERS[(n + 1) % len(USERS)])
        yield nc


def _median_ms(run: object, times: int = 25) -> float:
    assert callable(run)
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        spent.append(time.perf_counter() - start)
    return statistics.median(spent) * 1000


def test_depth_1_propfind_answers_in_milliseconds(big: NextcloudDialect) -> None:
    assert sum(1 for n in big.world.by_id.values() if not n.is_dir) == 30_000
    url = "/remote.php/dav/files/u0/top3/folder300/"
    with httpx.Client(base_url=big.url, auth=("u0", big.app_password("u0"))) as c:
        resp = c.request("PROPFIND", url, headers={"Depth": "1"})
        assert len(multistatus(resp.content)) == 11
        root = multistatus(c.request("PROPFIND", "/remote.php/dav/files/u0/").content)
        assert len(root) == 1 + 10 + 10  # its own ten folders and u2's ten, mounted
        over_http = _median_ms(lambda: c.request("PROPFIND", url, headers={"Depth": "1"}))
    request = Request("PROPFIND", url, {}, {"depth": "1"}, b"", big.url, big.world.users["u0"])
    in_process = _median_ms(lambda: big.app.route(request))
    # Measured at ~0.2 ms in process and ~1.2 ms over loopback on the 2-core machine; the
    # bounds leave room for a loaded CI, and would catch a scan of the 33,000 nodes.
    assert in_process < 5, in_process
    assert over_http < 25, over_http
