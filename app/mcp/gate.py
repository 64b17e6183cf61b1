"""Who is calling: the bearer token of the HTTP request that carries each MCP message, checked
by the HTTP API's authenticator before the MCP layer reads a byte (no token: 401, no `search`
scope: 403). The principal rides in the ASGI scope to the tools."""

from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from app.auth import SCOPE_SEARCH, Authenticator, Principal
from app.errors import ServiceError, Unauthenticated

PATH = "/mcp"  # where the endpoint is mounted, behind this gate
_PRINCIPAL = "astrolabe_principal"


class BearerGate:
    def __init__(self, app: ASGIApp, authenticator: Authenticator) -> None:
        self.app = app
        self.authenticator = authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            principal = self.authenticator.authenticate(bearer_token(scope))
            principal.require(SCOPE_SEARCH)
        except ServiceError as exc:
            await exc.response()(scope, receive, send)
            return
        scope["state"] = {**scope.get("state", {}), _PRINCIPAL: principal}
        await self.app(scope, receive, send)


def bearer_token(scope: Scope) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (the scheme in any case)."""
    header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
    scheme, _, token = header.partition(" ")
    return token if scheme.lower() == "bearer" else None


def principal_in(scope: Scope | Any) -> Principal:
    """The principal the gate put into this request's scope."""
    principal = scope.get("state", {}).get(_PRINCIPAL) if isinstance(scope, dict) else None
    if not isinstance(principal, Principal):
        raise Unauthenticated("no authenticated user on this request")
    return principal
