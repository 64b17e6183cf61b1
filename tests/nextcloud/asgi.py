"""The ASGI app: routing, Basic auth, faults, the request log, streaming.

Routing follows the URL layout of Nextcloud's client APIs
(https://docs.nextcloud.com/server/latest/developer_manual/client_apis/index.html):
/remote.php/dav/ (WebDAV, CalDAV), /ocs/v1.php/ and /ocs/v2.php/ (OCS), /index.php/login/v2
(Login Flow v2), /index.php/apps/deck/api/v1.0/ (Deck), /status.php. Authentication is Basic
with the login name and an (app) password; a failure answers 401 with
WWW-Authenticate: Basic realm="Nextcloud", charset="UTF-8" and sabre/dav's NotAuthenticated
body on DAV (the OCS envelope with statuscode 997 on OCS). A user's DAV home is
/remote.php/dav/files/<uid>/: another name there (another user's uid, or the login name when it
differs from the uid) is not found. An app that is not installed answers 404.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl, unquote

from tests.nextcloud import dav, davsearch, ocs
from tests.nextcloud.caldav import CalDav
from tests.nextcloud.deck import Deck
from tests.nextcloud.faults import Fault, Faults, Record, RequestLog
from tests.nextcloud.model import World
from tests.nextcloud.ocs import LoginFlows
from tests.nextcloud.web import ROOT_NS, Request, Response, dav_error, json_response
from tests.nextcloud.webhooks import Webhooks

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
CHUNK = 64 * 1024
AUTH_HEADER = ("WWW-Authenticate", 'Basic realm="Nextcloud", charset="UTF-8"')


class ResetConnection(Exception):
    """Raised mid-response so the server closes the connection (the "reset" fault)."""


class DialectApp:
    def __init__(
        self,
        world: World,
        deck: Deck,
        caldav: CalDav,
        webhooks: Webhooks,
        flows: LoginFlows,
        faults: Faults,
        log: RequestLog,
        depth_infinity: dav.DepthInfinity = "allow",
    ) -> None:
        self.world, self.deck, self.caldav, self.webhooks = world, deck, caldav, webhooks
        self.flows, self.faults, self.log = flows, faults, log
        self.depth_infinity: dav.DepthInfinity = depth_infinity

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        req = Request(
            scope["method"],
            scope["path"],
            dict(parse_qsl(scope["query_string"].decode(), keep_blank_values=True)),
            headers,
            b"".join(chunks),
            f"http://{headers.get('host', 'localhost')}",
        )
        req.user = self._authenticate(req)
        depth = headers.get("depth")
        fault = self.faults.take(req.method, req.path, req.user.uid if req.user else None)
        if fault is not None and fault.kind == "self_only":
            req.headers["depth"] = "0"
        resp = self._faulty(fault, req) or self.route(req)
        record = self.log.add(
            Record(
                req.method,
                req.path,
                depth,
                resp.status,
                req.user.uid if req.user else None,
                fault=fault.kind if fault else None,
                peer=":".join(map(str, scope["client"])) if scope.get("client") else None,
            )
        )
        await self._send(send, req, resp, record, fault)

    def _authenticate(self, req: Request) -> Any:
        auth = req.headers.get("authorization", "")
        if not auth.lower().startswith("basic "):
            return None
        try:
            login, _, password = base64.b64decode(auth[6:]).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return self.world.authenticate(login, password)

    def _faulty(self, fault: Fault | None, req: Request) -> Response | None:
        if fault is None:
            return None
        if fault.kind == "empty_207":
            body = f'<?xml version="1.0"?>\n<d:multistatus {ROOT_NS}/>\n'
            return Response(
                207, body.encode(), [("Content-Type", "application/xml; charset=utf-8")]
            )
        if fault.kind == "not_found":
            return dav.not_found(req.path)
        if fault.kind == "unauthorized":
            return dav_error(
                401,
                "NotAuthenticated",
                "No public access to this resource., Username or password was incorrect",
                [AUTH_HEADER],
            )
        if fault.kind == "status":
            headers = [("Retry-After", str(fault.retry_after))] if fault.retry_after else []
            return dav_error(fault.status, "ServiceUnavailable", "Injected fault", headers)
        return None

    async def _send(
        self, send: Send, req: Request, resp: Response, record: Record, fault: Fault | None
    ) -> None:
        headers = list(resp.headers)
        if resp.header("content-length") is None and resp.status != 304:
            headers.append(("Content-Length", str(len(resp.body))))
        await send(
            {
                "type": "http.response.start",
                "status": resp.status,
                "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers],
            }
        )
        body = resp.body
        step = fault.chunk if fault and fault.kind == "slow_body" else CHUNK
        if fault is not None and fault.kind == "reset":
            part = body[: min(fault.after_bytes, max(len(body) - 1, 0))]
            record.bytes = len(part)
            await send({"type": "http.response.body", "body": part, "more_body": True})
            raise ResetConnection(req.path)
        offsets = list(range(0, len(body), step)) or [0]
        for i, start in enumerate(offsets):
            piece = body[start : start + step]
            last = i == len(offsets) - 1
            record.bytes += len(piece)
            await send({"type": "http.response.body", "body": piece, "more_body": not last})
            if fault is not None and fault.kind == "slow_body" and not last:
                await asyncio.sleep(fault.delay)

    # routing -----------------------------------------------------------------------------

    def route(self, req: Request) -> Response:
        path = req.path
        if path == "/status.php":
            return json_response(
                200,
                {
                    "installed": True,
                    "maintenance": False,
                    "needsDbUpgrade": False,
                    "version": "31.0.0.0",
                    "versionstring": "31.0.0",
                    "edition": "",
                    "productname": "Nextcloud",
                    "extendedSupport": False,
                },
            )
        if path in ("/index.php/login/v2", "/login/v2") and req.method == "POST":
            with self.world.lock:
                return self.flows.start(req)
        if path in ("/index.php/login/v2/poll", "/login/v2/poll") and req.method == "POST":
            with self.world.lock:
                return self.flows.poll(req)
        if path.startswith(("/index.php/login/v2/flow/", "/login/v2/flow/")):
            return self.flows.page(req)
        if path == "/remote.php/dav" or path.startswith("/remote.php/dav/"):
            return self.route_dav(req, path[len("/remote.php/dav/") :])
        if path.startswith(("/ocs/v1.php/", "/ocs/v2.php/")):
            return self.route_ocs(req, path[len("/ocs/v2.php/") :])
        if path.startswith("/index.php/apps/deck/api/v1.0/"):
            if not self.deck.installed:
                return _page_not_found()
            if req.user is None:
                return json_response(
                    401, {"message": "Current user is not logged in"}, [AUTH_HEADER]
                )
            return self.deck.handle(req, path[len("/index.php/apps/deck/api/v1.0/") :])
        return _page_not_found()

    def route_dav(self, req: Request, rest: str) -> Response:
        if req.user is None:
            return dav_error(
                401,
                "NotAuthenticated",
                "No public access to this resource., Username or password was incorrect",
                [AUTH_HEADER],
            )
        uid, method = req.user.uid, req.method
        rest = unquote(rest)
        if method == "OPTIONS":
            return Response(
                200,
                headers=[
                    (
                        "DAV",
                        "1, 3, extended-mkcol, access-control, "
                        "calendar-access, calendarserver-sharing",
                    ),
                    ("DASL", "<DAV:basicsearch>"),
                ],
            )
        if rest.strip("/") == "":
            if method == "SEARCH":
                return davsearch.search(self.world, req, uid)
            if method == "PROPFIND":
                return dav.propfind_root(self.world, req, uid)
            return dav_error(405, "MethodNotAllowed", f"{method} is not allowed here")
        head, _, tail = rest.partition("/")
        if head == "files":
            owner, _, rel = tail.partition("/")
            if owner != uid:
                return dav_error(404, "NotFound", f"File with name {owner} could not be located")
            if method == "PROPFIND":
                return dav.propfind_files(self.world, req, uid, rel, self.depth_infinity)
            if method in ("GET", "HEAD"):
                return dav.get_file(self.world, req, uid, rel)
            if method == "REPORT":
                return davsearch.filter_files(self.world, req, uid, rel)
            if method in ("PUT", "MKCOL", "DELETE", "MOVE"):
                return dav.write(self.world, req, uid, rel)
            return dav_error(501, "NotImplemented", f"{method} is not supported by the dialect")
        if head == "principals" and tail.startswith("users/") and method == "PROPFIND":
            return dav.propfind_principal(self.world, req, uid, tail[6:].strip("/"))
        if head == "calendars" and self.caldav.installed:
            return self.caldav.handle(req, tail)
        if head in ("systemtags", "systemtags-relations") and method == "PROPFIND":
            return davsearch.systemtags(self.world, req, uid, rest)
        return dav_error(404, "NotFound", f"File with name {head} could not be located")

    def route_ocs(self, req: Request, rest: str) -> Response:
        if rest.startswith("cloud/capabilities"):
            return ocs.capabilities(req, {"deck": self.deck.installed})
        if req.headers.get("ocs-apirequest", "").lower() != "true":
            return ocs.csrf_failed()
        if req.user is None:
            return ocs.not_logged_in(req)
        if rest.rstrip("/") == "cloud/user":
            return ocs.current_user(self.world, req)
        sharing = "apps/files_sharing/api/v1/shares"
        if rest.startswith(sharing):
            return ocs.shares(self.world, req, rest[len(sharing) :].strip("/"))
        if rest.rstrip("/") == "core/apppassword" and req.method == "DELETE":
            password = base64.b64decode(req.headers["authorization"][6:]).decode()
            return ocs.delete_app_password(self.world, req, password.partition(":")[2])
        hooks = "apps/webhook_listeners/api/v1/webhooks"
        if rest.startswith(hooks):
            return self.webhooks.handle(req, rest[len(hooks) :].strip("/"))
        if rest.startswith("apps/deck/api/v1.0/") and self.deck.installed:
            inner = self.deck.handle(req, rest[len("apps/deck/api/v1.0/") :])
            if inner.status == 304:
                return inner
            data = json.loads(inner.body)
            wrapped = ocs.ocs(
                req, data, inner.status, "OK" if inner.status < 300 else str(data.get("message"))
            )
            wrapped.headers += [(k, v) for k, v in inner.headers if k == "ETag"]
            return wrapped
        return ocs.ocs(
            req,
            [],
            404,
            "Invalid query, please check the syntax. API "
            "specifications are here: http://www.freedesktop.org/wiki/Specifications/"
            "open-collaboration-services.",
        )


def _page_not_found() -> Response:
    html = b"<!DOCTYPE html><title>Nextcloud</title><p>Page not found</p>"
    return Response(404, html, [("Content-Type", "text/html; charset=utf-8")])
