"""The `/mcp` route inside the HTTP service, behind the bearer gate. The MCP SDK behind it
(`app.mcp.server`: 0.34 s of imports, a quarter of the web stack's) is imported in a worker
thread at the first call, which waits for it: neither `/readyz` nor the searches of the first
seconds after it wait for a client that may never come."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
from fastapi import FastAPI
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from app.errors import NotReady, error_response
from app.mcp.gate import PATH, BearerGate
from app.state import AppState

if TYPE_CHECKING:
    from app.mcp.server import SearchMCP

START_WAIT_S = 30.0  # how long a call waits for the SDK to be imported and started


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
        self._state = state
        self._app: ASGIApp | None = None
        self._wanted: anyio.Event | None = None
        self._started: anyio.Event | None = None
        self.asgi = PostOnly(BearerGate(self._serve, state.authenticator))

    def mount(self, app: FastAPI) -> None:
        app.router.routes.append(Route(PATH, endpoint=self.asgi, include_in_schema=False))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """For the app's lifespan: the SDK starts in it at the first call, and stops with it."""
        self._wanted, self._started = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._run)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()

    async def _run(self) -> None:
        assert self._wanted is not None and self._started is not None
        await self._wanted.wait()
        server, http_app = await anyio.to_thread.run_sync(self._start)
        async with server.session_manager.run():
            self._app = http_app
            self._started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self._app = None

    def _start(self) -> "tuple[SearchMCP, ASGIApp]":
        from app.mcp.server import start

        return start(self._state)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None and self._wanted is not None and self._started is not None:
            self._wanted.set()
            with anyio.move_on_after(START_WAIT_S):
                await self._started.wait()
        if self._app is None:
            await NotReady("the MCP endpoint is not running").response()(scope, receive, send)
            return
        await self._app(scope, receive, send)
