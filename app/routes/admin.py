"""`POST /api/v1/admin/backup` (scope `index`): a whole backup of the running index, sent as a
tar stream with its manifest last (`astrolabe-search backup --url` unpacks it). Writes wait
while the index is copied (searches go on); the copy is sent from the disk and removed after."""

import shutil
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from app.backup.make import make_backup
from app.backup.stream import tar_stream
from app.errors import ErrorBody
from app.routes.deps import IndexPrincipal, ServicesDep, StateDep

router = APIRouter(prefix="/api/v1/admin", tags=["operations"])
TAR = "application/x-tar"
RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The backup: a tar archive of the backup directory, `manifest.json` its"
        " last member (docs/deployment.md, Backup and restore).",
        "content": {TAR: {"schema": {"type": "string", "format": "binary"}}},
    },
    **{code: {"model": ErrorBody} for code in (401, 403, 503)},
    409: {
        "model": ErrorBody,
        "description": "`backup_failed`: no backup could be made (server mode: the node takes"
        " no snapshots, or the collection changed during every one).",
    },
    502: {"model": ErrorBody, "description": "`engine_failed`: Qdrant refused the snapshot."},
    507: {
        "model": ErrorBody,
        "description": "`storage_full`: the copy would not fit beside the index with the disk"
        " reserve left free; nothing was copied.",
    },
}


@router.post("/backup", response_class=StreamingResponse, responses=RESPONSES)
def backup(_: IndexPrincipal, state: StateDep, services: ServicesDep) -> StreamingResponse:
    """Copy the index at one moment of its writes (embedded) or snapshot the collection (server
    mode), then send the copy with its manifest."""
    staging = services.store.scratch_dir()
    try:
        make_backup(services.store, staging, state.settings.collection)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

    def sent() -> Iterator[bytes]:
        try:
            yield from tar_stream(staging)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    return StreamingResponse(
        sent(),
        media_type=TAR,
        headers={"Content-Disposition": 'attachment; filename="astrolabe-backup.tar"'},
        background=BackgroundTask(shutil.rmtree, staging, ignore_errors=True),
    )
