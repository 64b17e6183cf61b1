"""`GET /metrics` (scope `index`): the Prometheus text format. `SEARCH_METRICS_PORT` also serves
it without a token on a port of its own (app.telemetry.metrics.metrics_port)."""

from typing import Any

from fastapi import APIRouter, Response

from app.deps import IndexPrincipal, StateDep
from app.errors import ErrorBody
from app.telemetry.metrics import CONTENT_TYPE

router = APIRouter(tags=["operations"])
RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Prometheus text format (version 0.0.4); docs/deployment.md lists the"
        " metrics.",
        "content": {"text/plain": {"schema": {"type": "string"}}},
    },
    **{code: {"model": ErrorBody} for code in (401, 403)},
}


@router.get("/metrics", response_class=Response, responses=RESPONSES)
def metrics(_: IndexPrincipal, state: StateDep) -> Response:
    """Request, search, verify, ingest and index metrics of this process, for Prometheus."""
    return Response(state.metrics.render(), media_type=CONTENT_TYPE)
