"""`astrolabe-search nextcloud login | status` against the Nextcloud dialect: Login Flow v2 up to a
user stored sealed in the ledger, the app password never printed, the errors' exit codes, and
the status table and JSON."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from app.cli import main
from app.cli import nextcloud as nextcloud_cli
from app.cli.exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_REFUSED
from app.nextcloud.connector import ledger_path
from app.nextcloud.ledger import Ledger, Node
from app.nextcloud.vault import Vault
from tests.nextcloud.server import NextcloudDialect

ALICE, ALICE_LOGIN = "alice-uuid", "alice@example.org"
SECRET = "s3cret-key-of-32-characters-long"
EXIT_USAGE = 2  # argparse's


@pytest.fixture
def nc() -> Iterator[NextcloudDialect]:
    with NextcloudDialect() as dialect:
        dialect.add_user(ALICE, login=ALICE_LOGIN, display_name="Alice A.", groups=("staff",))
        yield dialect


@pytest.fixture(autouse=True)
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    monkeypatch.setenv("SEARCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SEARCH_SECRET_KEY", SECRET)
    monkeypatch.delenv("SEARCH_NEXTCLOUD_URL", raising=False)
    monkeypatch.setattr(nextcloud_cli, "POLL_SECONDS", 0.05)


@pytest.fixture
def url(nc: NextcloudDialect, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("SEARCH_NEXTCLOUD_URL", nc.url)
    return nc.url


def _run(*argv: str) -> int:
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    return int(done.value.code or 0)


def _started_flows(nc: NextcloudDialect) -> list[str]:
    """The login URLs of the flows started so far."""
    with nc.world.lock:
        tokens = [flow.login_token for flow in nc.flows.flows.values()]
    return [f"{nc.url}/index.php/login/v2/flow/{token}" for token in tokens]


def _once_started(
    nc: NextcloudDialect, grant: Callable[[str], str]
) -> Callable[[], tuple[str, str]]:
    """Wait for a login flow, let it be polled unanswered a few times, then `grant` it: the
    login URL and the app password."""

    def run() -> tuple[str, str]:
        deadline = time.monotonic() + 10
        while not (started := _started_flows(nc)):
            assert time.monotonic() < deadline, "no login flow was started"
            time.sleep(0.02)
        time.sleep(0.2)  # the command polls and gets 404 meanwhile
        return started[0], grant(started[0])

    return run


def _login_granted(
    nc: NextcloudDialect, *argv: str, grant: Callable[[str], str] | None = None
) -> tuple[int, str, str]:
    """`nextcloud login` with the flow granted by alice from another thread: the exit code,
    the login URL and the app password."""
    with ThreadPoolExecutor(1) as pool:
        granted: Future[tuple[str, str]] = pool.submit(
            _once_started(nc, grant or (lambda login_url: nc.grant_login(login_url, ALICE)))
        )
        code = _run("nextcloud", "login", *argv)
        login_url, password = granted.result(timeout=10)
    return code, login_url, password


def _users(tmp_path: Path) -> list[str]:
    path = ledger_path(tmp_path)
    if not path.exists():
        return []
    ledger = Ledger(path)
    try:
        return [user.user_id for user in ledger.users()]
    finally:
        ledger.close()


# login ----------------------------------------------------------------------------------------


def test_login_stores_the_user_sealed_and_status_lists_it(
    nc: NextcloudDialect, url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, login_url, password = _login_granted(nc)
    out = capsys.readouterr().out
    assert code == 0
    [line] = [line for line in out.splitlines() if login_url in line]
    assert line.startswith("Open this URL")
    assert f"connected Nextcloud user {ALICE} (login {ALICE_LOGIN})" in out

    ledger = Ledger(ledger_path(tmp_path))
    try:
        [user] = ledger.users()
    finally:
        ledger.close()
    assert (user.user_id, user.login_name, user.state) == (ALICE, ALICE_LOGIN, "syncing")
    assert user.sealed_password != password and password not in user.sealed_password
    assert Vault(SECRET).open(user.sealed_password) == password

    assert _run("nextcloud", "status") == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:2] == ["USER", "STATE"]
    assert row.split()[:4] == [ALICE, "syncing", "0", "0"]

    assert _run("nextcloud", "status", "--json") == 0
    [line_of_alice] = json.loads(capsys.readouterr().out)["users"]
    assert line_of_alice["user_id"] == ALICE and line_of_alice["state"] == "syncing"
    assert line_of_alice["files_seen"] == 0 and line_of_alice["skipped"] == {}
    assert "pending" not in line_of_alice


def test_login_never_prints_the_app_password(
    nc: NextcloudDialect,
    url: str,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    code, _, password = _login_granted(nc)
    assert code == 0
    assert _run("nextcloud", "status") == 0
    assert _run("nextcloud", "status", "--json") == 0
    printed = capsys.readouterr()
    assert ALICE in printed.out
    for text in (printed.out, printed.err, caplog.text):
        assert password not in text


def test_login_with_credentials_nextcloud_refuses_stores_nothing(
    nc: NextcloudDialect, url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def grant_then_revoke(login_url: str) -> str:
        with nc.world.lock:  # revoked before the command can collect it
            password = nc.flows.grant(login_url, ALICE)
            nc.revoke(password)
        return password

    code, _, password = _login_granted(nc, grant=grant_then_revoke)
    printed = capsys.readouterr()
    assert code == EXIT_FAILED
    assert "Nextcloud refused the login name or app password" in printed.err
    assert password not in printed.out + printed.err
    assert _users(tmp_path) == []


def test_login_without_a_url_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("nextcloud", "login") == EXIT_USAGE
    err = capsys.readouterr().err
    assert "usage: astrolabe-search nextcloud login" in err
    assert "--url or set SEARCH_NEXTCLOUD_URL" in err
    assert not ledger_path(tmp_path).exists()


def test_login_without_a_secret_key_is_refused_before_the_flow(
    nc: NextcloudDialect,
    url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("SEARCH_SECRET_KEY")
    assert _run("nextcloud", "login", "--timeout", "2") == EXIT_REFUSED
    assert "SEARCH_SECRET_KEY is not set" in capsys.readouterr().err
    assert _started_flows(nc) == []  # nobody was sent to grant access for nothing
    assert _users(tmp_path) == []


def test_login_not_granted_in_time_gives_up(
    nc: NextcloudDialect, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    assert _run("nextcloud", "login", "--url", nc.url, "--timeout", "0.4") == EXIT_FAILED
    assert time.monotonic() - started < 5
    printed = capsys.readouterr()
    assert "not granted within 0.4 s" in printed.err
    [login_url] = _started_flows(nc)
    assert login_url in printed.out
    # It waited, polling every POLL_SECONDS, for the whole timeout.
    assert nc.log.count("POST", "/index.php/login/v2/poll") >= 4
    assert _users(tmp_path) == []


def test_login_interrupted_stops_cleanly(
    nc: NextcloudDialect,
    url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def ctrl_c(_: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(nextcloud_cli, "_sleep", ctrl_c)
    assert _run("nextcloud", "login") == EXIT_INTERRUPTED
    err = capsys.readouterr().err
    assert "cancelled waiting for the grant; nothing was stored" in err
    assert "Traceback" not in err
    assert _users(tmp_path) == []


def test_login_against_nothing_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("nextcloud", "login", "--url", "http://127.0.0.1:9") == EXIT_FAILED
    err = capsys.readouterr().err
    assert err.startswith("astrolabe-search: no answer from Nextcloud at http://127.0.0.1:9")
    assert len(err.strip().splitlines()) == 1
    assert _users(tmp_path) == []


# status ---------------------------------------------------------------------------------------


def test_status_without_users_says_so_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("nextcloud", "status") == 0
    assert "no Nextcloud users connected" in capsys.readouterr().out
    assert _run("nextcloud", "status", "--json") == 0
    assert json.loads(capsys.readouterr().out) == {"users": []}
    assert not ledger_path(tmp_path).exists()


def test_status_shows_each_users_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = time.time()
    ledger = Ledger(ledger_path(tmp_path))
    try:
        ledger.save_user("bob", "bob", "sealed")
        ledger.save_user(ALICE, ALICE_LOGIN, "sealed")
        ledger.set_user(ALICE, state="failing", last_error="PROPFIND: HTTP 503", last_tick=now - 30)
        ledger.set_user("bob", state="ok", last_tick=now - 5, changed_since=now - 300)
        for i, (status, reason) in enumerate(
            [("indexed", None), ("indexed", None), ("skipped", "too_large"), ("skipped", "empty")]
        ):
            ledger.put_node(Node("bob", f"k{i}", f"f{i}.txt", "", False, f"e{i}", status, reason))
    finally:
        ledger.close()

    assert _run("nextcloud", "status") == 0
    header, alice, bob = capsys.readouterr().out.splitlines()
    assert header.index("LAST ERROR") == alice.index("PROPFIND: HTTP 503")
    assert alice.split()[:5] == [ALICE, "failing", "0", "0", "0"]
    assert bob.split()[:7] == ["bob", "ok", "4", "2", "empty", "1,", "too_large"]
    assert time.strftime("%Y-%m-%d %H:%M", time.localtime(now - 5)) in bob
    assert "5 min" in bob and bob.rstrip().endswith("-")

    assert _run("nextcloud", "status", "--json") == 0
    users = {u["user_id"]: u for u in json.loads(capsys.readouterr().out)["users"]}
    assert users["bob"]["skipped"] == {"too_large": 1, "empty": 1}
    assert users["bob"]["lag_seconds"] == pytest.approx(300, abs=5)
    assert users[ALICE]["last_error"] == "PROPFIND: HTTP 503"
    assert users[ALICE]["last_tick"] == pytest.approx(now - 30)
