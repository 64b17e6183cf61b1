"""The MCP endpoint: the SDK's Streamable HTTP app at `/mcp`, inside the HTTP service, behind
the bearer gate. Stateless with JSON answers: every POST stands alone, so any replica behind a
load balancer can answer it, and nothing is kept between calls."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import ValidationError
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from app import __version__
from app.errors import NotReady, error_response
from app.mcp.gate import BearerGate
from app.mcp.tools import error_result, invalid_arguments, register_tools
from app.state import AppState

PATH = "/mcp"
INSTRUCTIONS = """Astrolabe Search finds passages in the user's own documents (notes, files,
deck cards, news items) by meaning and keywords, under filters on type, date, folder, tags,
category and owner. Call list_facets to see what exists, then search; get_document reads one
document's metadata. Only documents the user may read are ever returned."""
# Bearer tokens, not cookies, authenticate every request, so a page that rebinds a host name
# cannot act as the user; and the host names the service is reached by are the deployer's.
TRANSPORT_SECURITY = TransportSecuritySettings(enable_dns_rebinding_protection=False)
# Every stateless call opens and terminates a transport, logged at INFO: the access log suffices.
QUIET_LOGGERS = ("mcp.server.streamable_http", "mcp.server.streamable_http_manager")


class SearchMCP(MCPServer[Any]):
    """Argument errors found before a tool runs (a bound, a type, an unknown argument) come
    back as tool errors in the HTTP API's words, like those the tools find themselves."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        unknown = await self._unknown_arguments(name, arguments)
        if unknown:
            refused = {"type": "extra_forbidden", "loc": (unknown[0],)}
            return error_result(invalid_arguments([refused]))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            return error_result(invalid_arguments(cause.errors()))

    async def _unknown_arguments(self, name: str, arguments: dict[str, Any]) -> list[str]:
        """A misspelt filter must not silently widen the results."""
        for tool in await self.list_tools():
            if tool.name == name:
                return sorted(set(arguments) - set(tool.input_schema.get("properties", {})))
        return []


def build_server(state: AppState) -> SearchMCP:
    server = SearchMCP(
        name="astrolabe-search",
        title="Astrolabe Search",
        version=__version__,
        instructions=INSTRUCTIONS,
        # The SDK configures the root logger when nothing has yet: not above Python's default.
        log_level="WARNING",
    )
    register_tools(server, state)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    return server


class PostOnly:
    """Only POST reaches the SDK: it would answer a GET with an event stream that never ends
    (stateless JSON answers have nothing to stream), pinning a connection for as long as the
    client waits. Like every other 405 of the service, answered before the token is read."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] != "POST":
            refused = error_response(
                405, "method_not_allowed", f"{scope['method']} is not served at {PATH}: use POST"
            )
            refused.headers["Allow"] = "POST"
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)


class McpEndpoint:
    def __init__(self, state: AppState) -> None:
        self.server = build_server(state)
        self._app: ASGIApp | None = None
        self.asgi = PostOnly(BearerGate(self._serve, state.authenticator))

    def mount(self, app: FastAPI) -> None:
        app.router.routes.append(Route(PATH, endpoint=self.asgi, include_in_schema=False))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """For the app's lifespan. The SDK's session manager runs once: a new app each time."""
        http_app = self.server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=True,
            transport_security=TRANSPORT_SECURITY,
        )
        async with self.server.session_manager.run():
            self._app = http_app
            try:
                yield
            finally:
                self._app = None

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None:
            await NotReady("the MCP endpoint is not running").response()(scope, receive, send)
            return
        await self._app(scope, receive, send)
