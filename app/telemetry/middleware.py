"""The outermost layer of every HTTP request: its id (echoed in `X-Request-ID`, carried by every
log line written meanwhile), its timing in the metrics by route template, and one access line
(the path without its query string, which may hold a search's text)."""

import logging
import time

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import ServiceError, error_response
from app.telemetry import request_id
from app.telemetry.metrics import Metrics

log = logging.getLogger("astrolabe.access")
METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
# Probes and scrapes come every few seconds: their lines are DEBUG.
QUIET_ROUTES = {"/healthz", "/readyz", "/metrics"}
UNMATCHED = "unmatched"  # the route label of a path no route serves


class RequestTelemetry:
    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id.request_id_from(Headers(scope=scope).get(request_id.HEADER))
        token = request_id.current.set(rid)
        status = 500
        answered = False
        started = time.perf_counter()
        self.metrics.http_in_progress.inc()

        async def send_with_id(message: Message) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status, answered = message["status"], True
                MutableHeaders(scope=message)[request_id.HEADER] = rid
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            if answered:
                raise
            # Nothing answered it: the envelope here, so this response carries the id too.
            log.exception("unhandled error")
            response = error_response(500, ServiceError.code, "internal server error")
            await response(scope, receive, send_with_id)
        finally:
            self.metrics.http_in_progress.dec()
            self._record(scope, status, time.perf_counter() - started)
            request_id.current.reset(token)

    def _record(self, scope: Scope, status: int, seconds: float) -> None:
        method = scope["method"] if scope["method"] in METHODS else "other"
        route = route_template(scope)
        labels = (method, route, str(status))
        self.metrics.http_requests.labels(*labels).inc()
        self.metrics.http_seconds.labels(*labels).observe(seconds)
        level = logging.DEBUG if route in QUIET_ROUTES else logging.INFO
        log.log(
            level,
            "%s %s %d %.1f ms",
            method,
            scope["path"],
            status,
            seconds * 1000,
            extra={
                "method": method,
                "path": scope["path"],
                "route": route,
                "status": status,
                "duration_ms": round(seconds * 1000, 2),
                "client": (scope.get("client") or ("", 0))[0],
            },
        )


def route_template(scope: Scope) -> str:
    """The template of the route that served the request (`/api/v1/documents/{doc_type}/
    {doc_id}`), never the path itself: a label must come from a short fixed set."""
    path = getattr(scope.get("route"), "path", None)
    return path if isinstance(path, str) and path else UNMATCHED
