"""`astrolabe-search nextcloud login | status`: a Nextcloud user connected through Login Flow v2
(https://docs.nextcloud.com/server/latest/developer_manual/client_apis/LoginFlow/index.html),
their app password checked and stored sealed in the connector's ledger, where a running `serve`
picks it up within seconds; and the connected users' figures, read from the ledger (SQLite in
WAL mode: it works while `serve` runs). The app password is never printed."""

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.cli.exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_REFUSED
from app.config import Settings

if TYPE_CHECKING:
    import httpx

    from app.errors import ServiceError
    from app.nextcloud.connector import UserFigures

FLOW_SECONDS = 20 * 60.0  # Nextcloud drops a login flow not granted within 20 minutes
POLL_SECONDS = 1.5  # between two polls of the flow's endpoint
USER_AGENT = "astrolabe-search"  # Nextcloud names the app password after it


class FlowFailed(Exception):
    """The login flow could not be started or collected."""


def login(args: argparse.Namespace) -> int:
    """Start a login flow, print the URL to open, wait for the grant, then check the app
    password against Nextcloud and store it sealed (`app.nextcloud.connector.register`)."""
    from app.errors import SecretKeyMissing, ServiceError
    from app.nextcloud.connector import ledger_path, register
    from app.nextcloud.ledger import Ledger
    from app.nextcloud.vault import Vault

    settings = Settings()
    url = (args.url or settings.nextcloud_url or "").rstrip("/")
    if not url:
        args.error("no Nextcloud URL: pass --url or set SEARCH_NEXTCLOUD_URL")
    stage = "waiting for the grant; nothing was stored"
    try:
        if not settings.secret_key:  # before the flow: the grant would be for nothing
            raise SecretKeyMissing(
                "SEARCH_SECRET_KEY is not set: no app password can be stored (set it to a"
                " random string of 16 characters or more, the same one `serve` uses)"
            )
        vault = Vault(settings.secret_key)
        granted = _login_flow(url, args.timeout, _sleep)
        if granted is None:
            print(
                f"astrolabe-search: the login was not granted within {_duration(args.timeout)};"
                " nothing was stored (run `nextcloud login` again)",
                file=sys.stderr,
            )
            return EXIT_FAILED
        login_name, app_password = granted
        stage = "while the credentials were checked (`nextcloud status` shows if it was stored)"
        ledger = Ledger(ledger_path(settings.data_dir))
        try:
            user_id = register(url, ledger, vault, login_name, app_password)
        finally:
            ledger.close()
    except KeyboardInterrupt:
        print(f"astrolabe-search: cancelled {stage}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except FlowFailed as exc:
        print(f"astrolabe-search: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except ServiceError as exc:
        print(f"astrolabe-search: {exc.message}", file=sys.stderr)
        return _service_exit_code(exc)
    print(f"connected Nextcloud user {user_id} (login {login_name})")
    if settings.nextcloud_url and settings.nextcloud_url.rstrip("/") != url:
        print(
            f"note: `serve` syncs {settings.nextcloud_url} (SEARCH_NEXTCLOUD_URL), not {url}",
            file=sys.stderr,
        )
    elif settings.nextcloud_url:
        print("a running `serve` starts syncing them within 5 s")
    else:
        print(f"set SEARCH_NEXTCLOUD_URL={url} for `serve` to sync them")
    return 0


def _service_exit_code(error: "ServiceError") -> int:
    """The connector not configured (SEARCH_SECRET_KEY) is refused like a start; Nextcloud
    refusing the credentials or not answering, and anything else, is a failed command."""
    from app.errors import SecretKeyMissing

    return EXIT_REFUSED if isinstance(error, SecretKeyMissing) else EXIT_FAILED


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def _login_flow(url: str, timeout: float, sleep: Callable[[float], None]) -> tuple[str, str] | None:
    """Login Flow v2: start it, print the URL to open, poll until granted: the login name and
    app password, or None when `timeout` seconds pass first."""
    import httpx

    with httpx.Client(
        timeout=httpx.Timeout(30.0, connect=5.0), headers={"User-Agent": USER_AGENT}
    ) as http:
        try:
            started = http.post(f"{url}/index.php/login/v2")
        except httpx.HTTPError as exc:
            raise FlowFailed(f"no answer from Nextcloud at {url}: {_reason(exc)}") from exc
        try:
            if started.status_code != 200:
                raise ValueError(f"HTTP {started.status_code}")
            body = started.json()
            endpoint, token = str(body["poll"]["endpoint"]), str(body["poll"]["token"])
            login_url = str(body["login"])
        except (ValueError, KeyError, TypeError) as exc:
            raise FlowFailed(
                f"{url} did not start a Nextcloud login flow ({exc}): is it the Nextcloud"
                " base URL (the one before /index.php)?"
            ) from exc
        print(
            f"Open this URL, log in as the Nextcloud user to connect and grant access: {login_url}",
            flush=True,
        )
        print(
            f"waiting up to {_duration(timeout)} for the grant (Ctrl-C cancels)...",
            file=sys.stderr,
            flush=True,
        )
        deadline = time.monotonic() + timeout
        while True:
            granted = _poll(http, endpoint, token)
            if granted is not None:
                return granted
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            sleep(min(POLL_SECONDS, remaining))


def _poll(http: "httpx.Client", endpoint: str, token: str) -> tuple[str, str] | None:
    """One poll: the credentials once granted; None while not (404), and on a blip (no
    answer, 5xx, 429): the next poll tries again."""
    import httpx

    try:
        answer = http.post(endpoint, data={"token": token})
    except httpx.TransportError:
        return None
    if answer.status_code == 404 or answer.status_code == 429 or answer.status_code >= 500:
        return None
    try:
        if answer.status_code != 200:
            raise ValueError(f"HTTP {answer.status_code}")
        body = answer.json()
        login_name, app_password = body["loginName"], body["appPassword"]
        if not isinstance(login_name, str) or not isinstance(app_password, str):
            raise TypeError("loginName or appPassword is not a string")
    except (ValueError, KeyError, TypeError) as exc:
        # The body may hold the app password: only the kind of failure is told.
        raise FlowFailed(f"the login flow's poll answered unexpectedly ({_reason(exc)})") from exc
    return login_name, app_password


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"no {exc}"
    return str(exc) or type(exc).__name__


def status(args: argparse.Namespace) -> int:
    """The connected users and their figures, from the ledger (opened only if it exists: a
    status never creates one)."""
    from app.nextcloud.connector import ledger_path, user_figures
    from app.nextcloud.ledger import Ledger

    path = ledger_path(Settings().data_dir)
    figures: list[UserFigures] = []
    if path.exists():
        ledger = Ledger(path)
        try:
            figures = user_figures(ledger, time.time())
        finally:
            ledger.close()
    if args.json:
        print(json.dumps({"users": [_as_json(f) for f in figures]}, indent=2))
    elif not figures:
        print("no Nextcloud users connected (`astrolabe-search nextcloud login` connects one)")
    else:
        print(_table(figures))
    return 0


def _as_json(figures: "UserFigures") -> dict[str, object]:
    """The fields of GET /api/v1/nextcloud/users but `pending` (the running service's queue,
    which the ledger does not hold)."""
    from app.nextcloud.models import UserLine

    return UserLine.of(figures).model_dump(exclude={"pending"})


HEADER = ("USER", "STATE", "FILES SEEN", "INDEXED", "SKIPPED", "LAST TICK", "LAG", "LAST ERROR")


def _table(figures: "list[UserFigures]") -> str:
    rows = [HEADER] + [
        (
            f.user_id,
            f.state,
            str(f.files_seen),
            str(f.indexed),
            ", ".join(f"{reason} {n}" for reason, n in sorted(f.skipped.items())) or "0",
            _when(f.last_tick),
            _duration(f.lag_seconds),
            (f.last_error or "-").replace("\n", " "),
        )
        for f in figures
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER) - 1)]
    return "\n".join(
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    )


def _when(moment: float | None) -> str:
    if moment is None:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(moment))


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s".replace(".0 s", " s")
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
