"""One user's HTTP to Nextcloud: Basic auth with the login name, 429/503 retried after their
Retry-After (bounded), 401/403 raised as Revoked, no answer raised as Unreachable.

Basic auth uses the login name; DAV paths use the user id (they differ under LDAP), which
`user_id()` reads from the current-user-principal."""

import contextlib
import functools
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import httpx

from app.nextcloud.dav import principal_href
from app.nextcloud.errors import AppMissing, Refused, Revoked, Unreachable

RETRIES = 4
MAX_RETRY_AFTER = 30.0  # seconds: a longer Retry-After ends the tick; the next one tries again
TIMEOUT = httpx.Timeout(30.0, connect=5.0)
OCS_HEADERS = {"OCS-APIRequest": "true", "Accept": "application/json"}
PRINCIPAL_BODY = (
    '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop>'
    "<d:current-user-principal/></d:prop></d:propfind>"
)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle costs ~26 ms, more than an idle
    tick's whole work, so it is not done per client."""
    return ssl.create_default_context()


def dav_quote(path: str) -> str:
    return quote(path, safe="/")


class RequestCounter:
    """Requests sent, by status (0: no answer), and ticks run: for status and /metrics."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_status: dict[int, int] = {}
        self.ticks = 0

    def tick(self) -> None:
        with self._lock:
            self.ticks += 1

    def add(self, status: int) -> None:
        with self._lock:
            self.by_status[status] = self.by_status.get(status, 0) + 1

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self.by_status.values())


class NextcloudClient:
    def __init__(
        self,
        base_url: str,
        login_name: str,
        app_password: str,
        counter: RequestCounter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        timeout: float | None = None,
        retries: int = RETRIES,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.login_name = login_name
        self._http = httpx.Client(
            base_url=self.base_url,
            auth=(login_name, app_password),
            timeout=TIMEOUT if timeout is None else httpx.Timeout(timeout),
            verify=tls_context(),
            headers={"User-Agent": "astrolabe-search"},
        )
        self.counter = counter or RequestCounter()
        self._sleep = sleep
        self._retries = retries

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "NextcloudClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        content: str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        """The answer to one request, after retries; raises on 401/403, 404 (AppMissing is
        left to the caller: a 404 is returned), 5xx and no answer. `timeout`: this request's,
        in seconds, instead of the client's."""
        limit = httpx.USE_CLIENT_DEFAULT if timeout is None else httpx.Timeout(timeout)
        for attempt in range(self._retries + 1):
            try:
                response = self._http.request(
                    method, path, content=content, headers=headers, params=params, timeout=limit
                )
            except httpx.TransportError as exc:
                self.counter.add(0)
                if attempt == self._retries:
                    raise Unreachable(f"{method} {path}: {type(exc).__name__}") from exc
                self._sleep(min(2.0**attempt, MAX_RETRY_AFTER))
                continue
            self.counter.add(response.status_code)
            if response.status_code in (401, 403):
                raise Revoked(f"{method} {path}: HTTP {response.status_code}")
            if response.status_code in (429, 502, 503, 504) and attempt < self._retries:
                wait = retry_after(response, default=2.0**attempt)
                if wait > MAX_RETRY_AFTER:
                    break
                self._sleep(wait)
                continue
            if response.status_code >= 500 or response.status_code == 429:
                break
            return response
        raise Unreachable(f"{method} {path}: HTTP {response.status_code} after retries")

    @contextlib.contextmanager
    def stream(self, path: str) -> Iterator[httpx.Response]:
        """A download, streamed; 401/403 and 5xx raised as for `request` (no retry: the tick
        that needs it tries again)."""
        try:
            with self._http.stream("GET", path) as response:
                self.counter.add(response.status_code)
                if response.status_code in (401, 403):
                    raise Revoked(f"GET {path}: HTTP {response.status_code}")
                if response.status_code >= 400:
                    raise Refused(f"GET {path}: HTTP {response.status_code}")
                yield response
        except httpx.TransportError as exc:
            self.counter.add(0)
            raise Unreachable(f"GET {path}: {type(exc).__name__}") from exc

    def ocs(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """The `data` of an OCS v2 answer (JSON)."""
        response = self.request("GET", f"/ocs/v2.php/{path}", headers=OCS_HEADERS, params=params)
        if response.status_code == 404:
            raise AppMissing(f"GET {path}: HTTP 404")
        if response.status_code >= 400:
            raise Refused(f"GET {path}: HTTP {response.status_code}")
        try:
            return response.json()["ocs"]["data"]
        except (ValueError, KeyError, TypeError) as exc:
            raise Refused(f"GET {path}: not an OCS answer") from exc

    def user_id(self) -> str:
        """The user id behind the login name, from the DAV current-user-principal."""
        response = self.request(
            "PROPFIND",
            "/remote.php/dav/",
            content=PRINCIPAL_BODY,
            headers={"Depth": "0", "Content-Type": "application/xml"},
        )
        if response.status_code != 207:
            raise Refused(f"PROPFIND principal: HTTP {response.status_code}")
        href = principal_href(response.content)
        parts = [p for p in urlsplit(href).path.split("/") if p]
        if len(parts) < 2 or parts[-2] != "users":
            raise Refused(f"PROPFIND principal: unexpected href {href!r}")
        return unquote(parts[-1])


def retry_after(response: httpx.Response, default: float) -> float:
    value = response.headers.get("Retry-After", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return default
