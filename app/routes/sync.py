"""The Astrolabe app's sync calls: how far indexing is, and purging whole doc types."""

import asyncio

from fastapi import APIRouter

from app.auth import SCOPE_INDEX, SCOPE_SEARCH
from app.errors import ErrorBody, Forbidden
from app.ingest.models import PurgeRequest, PurgeResponse, SyncStatus
from app.routes.deps import IndexPrincipal, PrincipalDep, ServicesDep

router = APIRouter(prefix="/api/v1/vector-sync", tags=["documents"])


@router.get(
    "/status",
    response_model=SyncStatus,
    responses={code: {"model": ErrorBody} for code in (401, 403, 503)},
)
def sync_status(principal: PrincipalDep, services: ServicesDep) -> SyncStatus:
    """Whether indexing is under way, and what the index holds (scope `search` or `index`)."""
    if not principal.scopes & {SCOPE_SEARCH, SCOPE_INDEX}:
        raise Forbidden("this token needs scope 'search' or 'index'")
    return SyncStatus.of(services.ingest.counts(), services.ingest.syncing)


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
