"""`Annotated[..., Depends()]` aliases the routes declare what they need with.

The dependencies are `async def` although none awaits: FastAPI runs a plain `def` dependency in
a worker thread, a thread handoff each (four for a search) on the event loop's critical path;
each of these is a few microseconds of work that never blocks."""

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.auth import SCOPE_INDEX, SCOPE_SEARCH, Principal
from app.params import refuse_repeated
from app.state import AppState, Services

_bearer = HTTPBearer(auto_error=False, description="A JWT (HS256) or a static API key.")


async def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.astrolabe
    return state


StateDep = Annotated[AppState, Depends(get_state)]


async def get_services(state: StateDep) -> Services:
    return state.require_services()


ServicesDep = Annotated[Services, Depends(get_services)]


async def authenticated(
    state: StateDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """Any valid token (HTTPBearer has already split off the scheme)."""
    return state.authenticator.authenticate(credentials.credentials if credentials else None)


async def may_search(principal: Annotated[Principal, Depends(authenticated)]) -> Principal:
    principal.require(SCOPE_SEARCH)
    return principal


async def may_index(principal: Annotated[Principal, Depends(authenticated)]) -> Principal:
    principal.require(SCOPE_INDEX)
    return principal


PrincipalDep = Annotated[Principal, Depends(authenticated)]
SearchPrincipal = Annotated[Principal, Depends(may_search)]
IndexPrincipal = Annotated[Principal, Depends(may_index)]


async def single_valued_query(request: Request) -> None:
    refuse_repeated(request.query_params)


SingleValued = Annotated[None, Depends(single_valued_query)]
