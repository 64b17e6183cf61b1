"""`Annotated[..., Depends()]` aliases the routes declare what they need with."""

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.auth import SCOPE_INDEX, SCOPE_SEARCH, Principal
from app.state import AppState, Engine

_bearer = HTTPBearer(auto_error=False, description="A JWT (HS256) or a static API key.")


def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.astrolabe
    return state


StateDep = Annotated[AppState, Depends(get_state)]


def get_engine(state: StateDep) -> Engine:
    return state.require_engine()


EngineDep = Annotated[Engine, Depends(get_engine)]


def _principal(
    state: StateDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    header = f"Bearer {credentials.credentials}" if credentials else None
    return state.authenticator.authenticate(header)


def searcher(principal: Annotated[Principal, Depends(_principal)]) -> Principal:
    principal.require(SCOPE_SEARCH)
    return principal


def indexer(principal: Annotated[Principal, Depends(_principal)]) -> Principal:
    principal.require(SCOPE_INDEX)
    return principal


SearcherDep = Annotated[Principal, Depends(searcher)]
IndexerDep = Annotated[Principal, Depends(indexer)]
