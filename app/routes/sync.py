"""The Astrolabe app's sync calls: how far indexing is, and purging whole doc types."""

import asyncio

from fastapi import APIRouter

from app.auth import SCOPE_INDEX, SCOPE_SEARCH
from app.errors import ErrorBody, Forbidden
from app.ingest.models import PurgeRequest, PurgeResponse, SyncStatus
from app.nextcloud.models import ConnectedUsers, StatusWithConnector, UserLine
from app.routes.deps import IndexPrincipal, PrincipalDep, ServicesDep

router = APIRouter(prefix="/api/v1/vector-sync", tags=["documents"])


@router.get(
    "/status",
    response_model=StatusWithConnector,
    response_model_exclude_none=True,  # `nextcloud` only when the connector runs
    responses={code: {"model": ErrorBody} for code in (401, 403, 503)},
)
def sync_status(principal: PrincipalDep, services: ServicesDep) -> StatusWithConnector:
    """Whether indexing is under way, and what the index holds (scope `search` or `index`);
    with the Nextcloud connector on, each connected user's sync (a `search` token sees only
    its own line)."""
    if not principal.scopes & {SCOPE_SEARCH, SCOPE_INDEX}:
        raise Forbidden("this token needs scope 'search' or 'index'")
    status = SyncStatus.of(services.ingest.counts(), services.ingest.syncing)
    users = None
    if services.connector is not None:
        lines = [UserLine.of(f) for f in services.connector.figures()]
        if SCOPE_INDEX not in principal.scopes:
            lines = [line for line in lines if line.user_id == principal.user]
        users = ConnectedUsers(users=lines)
    return StatusWithConnector(**status.model_dump(), nextcloud=users)


@router.post(
    "/purge",
    response_model=PurgeResponse,
    responses={code: {"model": ErrorBody} for code in (400, 401, 403, 503)},
)
async def purge(body: PurgeRequest, services: ServicesDep, _: IndexPrincipal) -> PurgeResponse:
    """Remove every document of these doc types (at most 20), indexed or waiting to be. Safe
    against a kill at any moment: each document is either fully present or fully gone, and a
    purge cut short finishes when the service starts again. Documents accepted after the
    purge began stay."""
    purged = await asyncio.to_thread(services.ingest.purge, body.doc_types)
    return PurgeResponse(purged=purged)
