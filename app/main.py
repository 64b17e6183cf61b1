"""The app factory. Nothing is built at import time: `create_app(settings)` wires everything and
the lifespan opens the engine (synchronously: a locked data directory fails the start) and loads
the models in a thread (so /healthz answers and /readyz says 503 meanwhile)."""

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.openapi.utils import get_openapi
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import __version__
from app.auth import Authenticator, build_authenticator
from app.config import Settings
from app.embeddings.dense import DenseEncoder
from app.errors import PayloadTooLarge, error_response, install_error_handlers
from app.ingest.receive import MULTIPART_OVERHEAD
from app.mcp.endpoint import McpEndpoint
from app.routes import (
    admin,
    documents,
    files,
    metrics,
    navigation,
    nextcloud,
    search,
    status,
    sync,
    viz,
)
from app.routes.compat import compat_validation_error
from app.routes.metrics import StatusCollector
from app.routes.pages import install_pages
from app.state import AppState, close_services, load_services
from app.store.base import Store
from app.store.open import open_store
from app.telemetry.logs import configure_logging
from app.telemetry.metrics import metrics_port
from app.telemetry.middleware import RequestTelemetry
from app.telemetry.request_id import document_request_id

DESCRIPTION = """Hybrid (dense all-MiniLM-L6-v2 + BM25) search over document chunks, with rich
filters applied inside the engine, access rules and verify-on-read. The contract, with the date
and folder rules and the verify-on-read protocol, is docs/api.md in the repository."""


class BodyLimit:
    """413 for a request body over the limit, by Content-Length or by counting the stream."""

    def __init__(
        self, app: ASGIApp, max_bytes: int, per_path: dict[str, int] | None = None
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.per_path = per_path or {}  # paths with a limit of their own (file uploads)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        max_bytes = self.per_path.get(scope.get("path", ""), self.max_bytes)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > max_bytes:
            response = error_response(
                413, PayloadTooLarge.code, f"request body over {max_bytes} bytes"
            )
            await response(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > max_bytes:  # an HTTPException passes FastAPI's body parsing as is
                raise HTTPException(413, f"request body over {max_bytes} bytes")
            return message

        await self.app(scope, counted, send)


def _contract_openapi(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """FastAPI documents 422 for validation errors; this service answers 400 (the envelope).
    Every operation takes and answers `X-Request-ID`."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            for path in schema.get("paths", {}).values():
                for operation in path.values():
                    responses = operation.get("responses", {})
                    if "HTTPValidationError" in str(responses.get("422", "")):
                        del responses["422"]  # FastAPI's; the dialect's own 422 stays
            for name in ("HTTPValidationError", "ValidationError"):
                schema.get("components", {}).get("schemas", {}).pop(name, None)
            document_request_id(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    return openapi


UNROUTED_PATH = "/.astrolabe-unrouted"  # no route has it: a request for it passes them all


async def build_routes(app: FastAPI) -> None:
    """FastAPI builds the routes of an included router (their dependencies, their body and
    response models) when a request first passes through it: ~12 ms of the first search after
    a start. A request for a path no route has passes through every router: sent here to the
    router itself (no middleware sees it, so no log line nor metric), before the first user's."""
    # Without "app" in the scope, the router answers the 404 itself instead of raising it.
    scope: Scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": UNROUTED_PATH, "raw_path": UNROUTED_PATH.encode(),
        "root_path": "", "query_string": b"", "headers": [], "client": None, "server": None,
    }  # fmt: skip

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        pass  # the 404 of the unrouted path

    await app.router(scope, receive, send)


def create_app(
    settings: Settings,
    *,
    authenticator: Authenticator | None = None,
    dense: DenseEncoder | None = None,
    store: Store | None = None,
) -> FastAPI:
    """`dense` lets tests share one loaded model between apps; by default MiniLM is loaded.
    `store`: already opened (`serve` opens it first, to refuse a start in one line)."""
    configure_logging(settings.log_format)
    state = AppState(settings, authenticator or build_authenticator(settings))
    state.metrics.registry.register(StatusCollector(state))
    mcp = McpEndpoint(state) if settings.mcp_enabled else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        opened = store if store is not None else open_store(settings)
        loader = threading.Thread(
            target=load_services, args=(state, opened, dense), name="astrolabe-loader", daemon=True
        )
        loader.start()
        await build_routes(app)
        try:
            async with AsyncExitStack() as stack:
                if mcp is not None:
                    await stack.enter_async_context(mcp.running())
                if settings.metrics_port is not None:
                    port = metrics_port(settings.metrics_host, settings.metrics_port, state.metrics)
                    stack.enter_context(port)
                yield
        finally:
            loader.join()
            close_services(state)

    app = FastAPI(
        title="Astrolabe Search",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # install_pages serves the explorers with local assets
        redoc_url=None,
    )
    app.state.astrolabe = state
    install_error_handlers(app, compat_validation_error)
    for module in (status, documents, files, sync, search, viz, navigation, metrics, admin):
        app.include_router(module.router)
    app.include_router(nextcloud.router)
    app.include_router(nextcloud.webhooks)
    if mcp is not None:
        mcp.mount(app)
    install_pages(app)
    upload_bytes = settings.max_file_bytes + MULTIPART_OVERHEAD
    app.add_middleware(
        BodyLimit, max_bytes=settings.max_body_bytes, per_path={files.FILES_PATH: upload_bytes}
    )
    app.add_middleware(RequestTelemetry, metrics=state.metrics)  # outermost: every answer
    app.openapi = _contract_openapi(app)  # type: ignore[method-assign]
    return app
