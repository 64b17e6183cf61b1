"""The Nextcloud connector's routes: connected users, a tick now, and the webhook receiver."""

import asyncio
import hmac
import json
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import JSONResponse

from app.errors import ConnectorOff, ErrorBody, InvalidRequest, Unauthenticated
from app.nextcloud.models import (
    ConnectedUser,
    ConnectedUsers,
    ConnectUser,
    SyncRequest,
    SyncStarted,
    UserLine,
    WebhookAnswer,
)
from app.nextcloud.webhooks import hint_of
from app.routes.deps import IndexPrincipal, ServicesDep, StateDep
from app.state import Services

if TYPE_CHECKING:
    from app.nextcloud.connector import Connector

router = APIRouter(prefix="/api/v1/nextcloud", tags=["nextcloud"])
webhooks = APIRouter(tags=["nextcloud"])
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 502, 503)
}


def connector_of(services: Services) -> "Connector":
    if services.connector is None:
        raise ConnectorOff("the Nextcloud connector is off: set SEARCH_NEXTCLOUD_URL")
    return services.connector


@router.post("/users", status_code=201, response_model=ConnectedUser, responses=ERRORS)
async def connect_user(
    body: ConnectUser, services: ServicesDep, _: IndexPrincipal
) -> ConnectedUser:
    """Connect a Nextcloud user with an app password: checked against Nextcloud (400
    `nextcloud_auth_failed` if refused, 502 `nextcloud_unreachable`), stored encrypted, and
    their first index starts."""
    connector = connector_of(services)
    user_id = await asyncio.to_thread(connector.connect, body.login_name, body.app_password)
    return ConnectedUser(user_id=user_id, state="syncing")


@router.get("/users", response_model=ConnectedUsers, responses=ERRORS)
def list_users(services: ServicesDep, _: IndexPrincipal) -> ConnectedUsers:
    """Connected users with their state and figures (never a password)."""
    return ConnectedUsers(users=[UserLine.of(f) for f in connector_of(services).figures()])


@router.delete("/users/{user_id}", status_code=204, responses=ERRORS)
async def disconnect_user(user_id: str, services: ServicesDep, _: IndexPrincipal) -> Response:
    """Stop the user's sync; they stop being a reader of what only their sync saw, and what
    no connected user sees any more is deleted."""
    await asyncio.to_thread(connector_of(services).disconnect, user_id)
    return Response(status_code=204)


@router.post("/sync", status_code=202, response_model=SyncStarted, responses=ERRORS)
def sync_now(
    services: ServicesDep, _: IndexPrincipal, body: SyncRequest | None = None
) -> SyncStarted:
    """A tick now (shares, Deck and Calendar read again too), for one user or all."""
    user_id = body.user_id if body is not None else None
    return SyncStarted(users=connector_of(services).sync_now(user_id))


@webhooks.post(
    "/webhooks/nextcloud",
    response_model=WebhookAnswer,
    response_model_exclude_none=True,
    responses={code: {"model": ErrorBody} for code in (400, 401, 503)},
)
async def nextcloud_webhook(
    request: Request,
    state: StateDep,
    services: ServicesDep,
    authorization: str | None = Header(default=None),
) -> JSONResponse:
    """Nextcloud's webhook_listeners envelope, sent with `Authorization: Bearer
    <SEARCH_NEXTCLOUD_WEBHOOK_SECRET>`. An event only says where to look: the users it
    concerns get a tick now, which reads content and readers from Nextcloud."""
    secret = state.settings.nextcloud_webhook_secret
    given = (authorization or "").removeprefix("Bearer ").strip()
    if not secret or not hmac.compare_digest(given.encode(), secret.encode()):
        raise Unauthenticated("a webhook needs the bearer SEARCH_NEXTCLOUD_WEBHOOK_SECRET")
    try:
        envelope = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidRequest(f"the body is not JSON: {exc}") from exc
    hint = hint_of(envelope)
    if hint is None or services.connector is None:
        return JSONResponse({"ignored": True})
    woken = services.connector.look_at(hint)
    return JSONResponse({"queued": woken} if woken else {"ignored": True})
