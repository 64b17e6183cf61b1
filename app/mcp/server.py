"""The MCP server: the SDK's Streamable HTTP app that `app.mcp.endpoint` serves at `/mcp`.
Stateless with JSON answers: every POST stands alone, so any replica behind a load balancer can
answer it, and nothing is kept between calls."""

import logging
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import ValidationError
from starlette.types import ASGIApp

from app import __version__
from app.mcp.gate import PATH
from app.mcp.tools import error_result, invalid_arguments, register_tools
from app.state import AppState

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


def start(state: AppState) -> tuple[SearchMCP, ASGIApp]:
    """The SDK's server and its Streamable HTTP app (its session manager runs once: a new pair
    for each run of the service)."""
    server = build_server(state)
    http_app = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        transport_security=TRANSPORT_SECURITY,
    )
    return server, http_app
