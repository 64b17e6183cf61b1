"""Liveness, readiness, the service status, and who a token is."""

from fastapi import APIRouter, Response

from app.errors import ErrorBody
from app.routes.deps import PrincipalDep, ServicesDep, StateDep
from app.status import Health, Me, Readiness, StatusFigures, StatusResponse

router = APIRouter(tags=["status"])


@router.get("/healthz", response_model=Health)
def healthz() -> Health:
    """200 while the process lives."""
    return Health()


@router.get(
    "/readyz",
    response_model=Readiness,
    response_model_exclude_none=True,
    responses={503: {"model": Readiness, "description": "engine or models not ready"}},
)
def readyz(state: StateDep, response: Response) -> Readiness:
    """200 once the engine and the models are ready, 503 before (or if the start failed)."""
    readiness = Readiness.of(state)
    if readiness.status != "ready":
        response.status_code = 503
    return readiness


@router.get("/api/v1/status", response_model=StatusResponse, responses={503: {"model": ErrorBody}})
def status(state: StateDep, services: ServicesDep) -> StatusResponse:
    """Version, backend, collection, embedding model, counts, supported algorithms."""
    return StatusResponse.of(state.settings, StatusFigures.of(services))


@router.get("/api/v1/me", response_model=Me, responses={401: {"model": ErrorBody}})
def me(principal: PrincipalDep) -> Me:
    """Who the bearer token is (any valid token, whatever its scopes)."""
    return Me.of(principal)
