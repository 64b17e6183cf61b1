"""`Annotated[..., Depends()]` aliases the routes declare what they need with."""

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.auth import SCOPE_INDEX, SCOPE_SEARCH, Principal
from app.errors import InvalidRequest
from app.state import AppState, Services

_bearer = HTTPBearer(auto_error=False, description="A JWT (HS256) or a static API key.")


def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.astrolabe
    return state


StateDep = Annotated[AppState, Depends(get_state)]


def get_services(state: StateDep) -> Services:
    return state.require_services()


ServicesDep = Annotated[Services, Depends(get_services)]


def authenticated(
    state: StateDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """Any valid token (HTTPBearer has already split off the scheme)."""
    return state.authenticator.authenticate(credentials.credentials if credentials else None)


def may_search(principal: Annotated[Principal, Depends(authenticated)]) -> Principal:
    principal.require(SCOPE_SEARCH)
    return principal


def may_index(principal: Annotated[Principal, Depends(authenticated)]) -> Principal:
    principal.require(SCOPE_INDEX)
    return principal


PrincipalDep = Annotated[Principal, Depends(authenticated)]
SearchPrincipal = Annotated[Principal, Depends(may_search)]
IndexPrincipal = Annotated[Principal, Depends(may_index)]


def single_valued_query(request: Request) -> None:
    """A query parameter given twice is refused: the last one would silently win (`tags=a&tags=b`
    would filter on `b` alone). Lists are one parameter, comma- or newline-separated."""
    seen: set[str] = set()
    for name, _ in request.query_params.multi_items():
        if name in seen:
            raise InvalidRequest(
                f"{name} is given more than once: give it once (a list is one value, its items"
                " separated by commas or newlines)",
                field=name,
            )
        seen.add(name)


SingleValued = Annotated[None, Depends(single_valued_query)]
