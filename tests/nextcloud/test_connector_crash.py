"""kill -9 in the middle of a first index: the restarted `serve` loses nothing, indexes nothing
twice and downloads nothing it had already read."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from app.nextcloud.connector import ledger_path
from app.nextcloud.ledger import Ledger
from tests.helpers import start_serve
from tests.nextcloud.conftest import ALICE
from tests.nextcloud.connector_helpers import SECRET_KEY
from tests.nextcloud.dialect import NextcloudDialect

KEY = "crash-test-index-key"
FILES = 24


def _serve(root: Path, nc: NextcloudDialect) -> tuple[subprocess.Popen[bytes], httpx.Client]:
    process, base = start_serve(
        root / "data",
        root / "keys.json",
        SEARCH_NEXTCLOUD_URL=nc.url,
        SEARCH_SECRET_KEY=SECRET_KEY,
        SEARCH_NEXTCLOUD_INTERVAL="1",
    )
    client = httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {KEY}"})
    return process, client


def _line(client: httpx.Client) -> dict[str, Any]:
    (line,) = client.get("/api/v1/nextcloud/users").json()["users"]
    return dict(line)


def _downloads(nc: NextcloudDialect) -> Counter[str]:
    return Counter(
        r.path.rsplit("/", 1)[1]
        for r in nc.log.snapshot()
        if r.method == "GET" and r.path.endswith(".txt") and r.status == 200
    )


def test_kill_9_mid_walk_loses_nothing_and_downloads_nothing_twice(
    tmp_path: Path, nc: NextcloudDialect
) -> None:
    (tmp_path / "keys.json").write_text(json.dumps({KEY: {"sub": ALICE, "scope": "index search"}}))
    (tmp_path / "data").mkdir()
    for i in range(FILES):
        nc.put(ALICE, f"F{i % 6}/sub{i % 3}/file{i}.txt", f"record {i} of the ledger".encode())
    # Each download trickles: the walk is still under way when the process is killed.
    nc.fault(
        "slow_body", method="GET", path_prefix="/remote.php/dav/files/", times=None, delay=0.05
    )
    process, client = _serve(tmp_path, nc)
    password = nc.app_password(ALICE)
    login = nc.world.users[ALICE].login
    response = client.post(
        "/api/v1/nextcloud/users", json={"login_name": login, "app_password": password}
    )
    assert response.status_code == 201, response.text
    deadline = time.monotonic() + 60
    while _line(client)["indexed"] < FILES // 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    client.close()
    ledger = Ledger(ledger_path(tmp_path / "data"))
    read_before = {n.path.rsplit("/", 1)[1] for n in ledger.files(ALICE) if n.etag}
    ledger.close()
    assert 0 < len(read_before) < FILES, "the kill came too late or too early"
    nc.clear_faults()
    first_run = _downloads(nc)
    nc.reset_log()

    process, client = _serve(tmp_path, nc)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = _line(client)
            if line["state"] == "ok" and line["indexed"] == FILES:
                break
            time.sleep(0.1)
        assert line["indexed"] == FILES, line
        hits = client.post(
            "/api/v1/search", json={"query": "ledger record", "algorithm": "bm25", "limit": 100}
        ).json()["results"]
        assert len({h["doc_id"] for h in hits}) == len(hits) == FILES
        again = _downloads(nc)
        assert not set(again) & read_before, "downloaded again after the restart"
        assert set(again) | set(first_run) == {f"file{i}.txt" for i in range(FILES)}
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        client.close()
