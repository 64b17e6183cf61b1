"""webhook_listeners: registration over OCS, queued events, delivery as Nextcloud's job does it.

Follows https://docs.nextcloud.com/server/latest/admin_manual/webhook_listeners/index.html (the
payload envelope {"event": {"class", ...}, "user": {"uid", "displayName"} | null, "time"}, the
node, two-node, system tag and calendar event shapes, eventFilter in dot notation with
"/regex/" values; registering needs an administrator; webhooks are sent by background jobs,
every 5 minutes by default) and apps/webhook_listeners in nextcloud/server: the OCS routes
GET/POST /ocs/v2.php/apps/webhook_listeners/api/v1/webhooks and GET/DELETE .../webhooks/<id>
(Controller/WebhooksController.php; POST takes httpMethod, uri, event, eventFilter,
userIdFilter, headers, authMethod "none"|"header", authData), and the delivery
(BackgroundJobs/WebhookCall.php): the body is json_encode(envelope), the headers are the
registered ones merged with authData for authMethod "header" (e.g. {"Authorization":
"Bearer ..."}), and no Content-Type is added. Deck's card events follow docs/events.md in
nextcloud/deck (OCA\\Deck\\Event\\CardCreatedEvent, CardUpdatedEvent with before/after,
CardDeletedEvent).
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.nextcloud.model import Event, World
from tests.nextcloud.ocs import ocs
from tests.nextcloud.web import Request, Response

ADMIN_GROUP = "admin"


@dataclass
class Listener:
    id: int
    user_id: str
    http_method: str
    uri: str
    event: str
    event_filter: dict[str, Any] = field(default_factory=dict)
    user_id_filter: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    auth_method: str = "none"
    auth_data: dict[str, str] = field(default_factory=dict)

    def info(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "userId": self.user_id,
            "httpMethod": self.http_method,
            "uri": self.uri,
            "event": self.event,
            "eventFilter": self.event_filter,
            "headers": self.headers,
            "authMethod": self.auth_method,
        }


def _lookup(envelope: Event, dotted: str) -> tuple[bool, Any]:
    value: Any = envelope
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            return False, None
        value = value[key]
    return True, value


def _matches(envelope: Event, event_filter: dict[str, Any]) -> bool:
    for key, want in event_filter.items():
        present, value = _lookup(envelope, key)
        if isinstance(want, dict) and set(want) == {"$exists"}:
            if present != bool(want["$exists"]):
                return False
        elif (
            isinstance(want, str) and len(want) > 1 and want.startswith("/") and want.endswith("/")
        ):
            if not present or re.search(want[1:-1], str(value)) is None:
                return False
        elif not present or value != want:
            return False
    return True


class Webhooks:
    """Registered listeners; events wait in a queue until `run_jobs` (Nextcloud's cron)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.listeners: dict[int, Listener] = {}
        self.queue: list[tuple[Listener, Event]] = []
        self._ids = itertools.count(1)
        world.listeners.append(self.on_event)

    def register(
        self,
        user_id: str,
        uri: str,
        event: str,
        *,
        http_method: str = "POST",
        event_filter: dict[str, Any] | None = None,
        user_id_filter: str | None = None,
        headers: dict[str, str] | None = None,
        auth_method: str = "none",
        auth_data: dict[str, str] | None = None,
    ) -> Listener:
        for key, want in (event_filter or {}).items():
            if isinstance(want, dict) and set(want) != {"$exists"}:
                raise ValueError(f"filter operator for {key} is not modelled by the dialect")
        if auth_method not in ("none", "header"):
            raise ValueError("This auth method does not exist")
        listener = Listener(
            next(self._ids),
            user_id,
            http_method,
            uri,
            event,
            event_filter or {},
            user_id_filter or None,
            headers or {},
            auth_method,
            auth_data or {},
        )
        with self.world.lock:
            self.listeners[listener.id] = listener
        return listener

    def on_event(self, envelope: Event) -> None:
        for listener in list(self.listeners.values()):
            if listener.event != envelope["event"]["class"]:
                continue
            user = envelope.get("user") or {}
            if listener.user_id_filter and user.get("uid") != listener.user_id_filter:
                continue
            if _matches(envelope, listener.event_filter):
                self.queue.append((listener, envelope))

    def run_jobs(self, timeout: float = 5.0) -> list[int]:
        """Send every queued event, as the WebhookCall background job would; their statuses."""
        with self.world.lock:
            jobs, self.queue = self.queue, []
        return [
            self.deliver(hook.uri, env, hook.http_method, self._headers(hook), timeout)
            for hook, env in jobs
        ]

    @staticmethod
    def _headers(listener: Listener) -> dict[str, str]:
        headers = dict(listener.headers)
        if listener.auth_method == "header":
            headers.update(listener.auth_data)
        return headers

    @staticmethod
    def deliver(
        url: str,
        envelope: Event,
        method: str = "POST",
        headers: dict[str, str] | None = None,
        timeout: float = 5.0,
    ) -> int:
        """Send one envelope now; the receiver's status (0 when it could not be reached)."""
        try:
            with httpx.Client(timeout=timeout) as client:
                body = json.dumps(envelope).encode()
                return client.request(method, url, content=body, headers=headers or {}).status_code
        except httpx.HTTPError:
            return 0

    def handle(self, req: Request, rest: str) -> Response:
        """/ocs/v2.php/apps/webhook_listeners/api/v1/webhooks[/<id>]."""
        assert req.user is not None
        if ADMIN_GROUP not in req.user.groups:
            return ocs(req, [], 403, "Logged in account must be an admin")
        if rest:
            listener = self.listeners.get(int(rest)) if rest.isdigit() else None
            if req.method == "DELETE":
                with self.world.lock:
                    deleted = self.listeners.pop(int(rest), None) if rest.isdigit() else None
                return ocs(req, deleted is not None)
            if listener is None:
                return ocs(req, [], 404, "Webhook listener not found")
            return ocs(req, listener.info())
        if req.method == "POST":
            params = req.form()
            missing = [k for k in ("httpMethod", "uri", "event") if not params.get(k)]
            if missing:
                return ocs(req, [], 400, f"Missing parameter {missing[0]}")
            try:
                listener = self.register(
                    req.user.uid,
                    str(params["uri"]),
                    str(params["event"]),
                    http_method=str(params["httpMethod"]),
                    event_filter=params.get("eventFilter") or None,
                    user_id_filter=params.get("userIdFilter") or None,
                    headers=params.get("headers") or None,
                    auth_method=str(params.get("authMethod") or "none"),
                    auth_data=params.get("authData") or None,
                )
            except ValueError as e:
                return ocs(req, [], 400, str(e))
            return ocs(req, listener.info())
        uri = req.query.get("uri")
        found = [h.info() for h in self.listeners.values() if uri is None or h.uri == uri]
        return ocs(req, found)
