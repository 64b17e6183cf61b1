"""One error tree, rendered by one handler into the envelope of docs/api.md. A class carries
its HTTP status and its stable code; a subclass inherits the status of its family (a store's
`EngineUnavailable` is an `Unavailable`: 503), so the status follows from where it sits.

The web stack is imported where a response is made, not here: the engine process raises these
errors too, and starts 0.15 s sooner without fastapi."""

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse

log = logging.getLogger(__name__)


class ServiceError(Exception):
    """Something the service answers for; a bare one is a 500 whose message is not shown."""

    status_code = 500
    code = "internal_error"
    public = True  # False: the message may hold internals; the client gets a generic one

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def response(self) -> "JSONResponse":
        if not self.public:
            log.error("%s: %s", self.code, self.message, exc_info=self)
            return error_response(self.status_code, self.code, "internal server error")
        response = error_response(self.status_code, self.code, self.message, self.field)
        response.headers.update(self.headers())
        return response

    def headers(self) -> dict[str, str]:
        return {}


class InvalidRequest(ServiceError):
    status_code = 400
    code = "invalid_request"


class Unauthenticated(ServiceError):
    status_code = 401
    code = "unauthenticated"


class Forbidden(ServiceError):
    status_code = 403
    code = "forbidden"


class NotFound(ServiceError):
    status_code = 404
    code = "not_found"


class PayloadTooLarge(ServiceError):
    status_code = 413
    code = "payload_too_large"


class Unavailable(ServiceError):
    """Try again later: the service or what it depends on cannot answer now."""

    status_code = 503
    code = "unavailable"


class NotReady(Unavailable):
    code = "not_ready"


class QueueFull(ServiceError):
    status_code = 429
    code = "queue_full"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


class ShuttingDown(ServiceError):
    status_code = 503
    code = "shutting_down"


class NextcloudAuthFailed(InvalidRequest):
    """Nextcloud refused the login name and app password."""

    code = "nextcloud_auth_failed"


class NextcloudUnreachable(ServiceError):
    status_code = 502
    code = "nextcloud_unreachable"


class ConnectorOff(NotFound):
    """This service runs no Nextcloud connector (SEARCH_NEXTCLOUD_URL is not set)."""

    code = "nextcloud_not_configured"


class SecretKeyMissing(Unavailable):
    """An app password cannot be stored: SEARCH_SECRET_KEY is not set."""

    code = "secret_key_missing"


class ErrorDetail(BaseModel):
    code: str
    message: str
    field: str | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail


def encodable(text: str) -> str:
    """The text with what UTF-8 cannot carry (lone surrogates a client sent, quoted back in a
    message) escaped as `\\udXXX`, so rendering an error can never fail."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def error_response(
    status_code: int, code: str, message: str, field: str | None = None
) -> "JSONResponse":
    from fastapi.responses import JSONResponse

    body = ErrorBody(
        error=ErrorDetail(
            code=code, message=encodable(message), field=encodable(field) if field else field
        )
    )
    headers = {"WWW-Authenticate": "Bearer"} if status_code == 401 else None
    return JSONResponse(body.model_dump(), status_code=status_code, headers=headers)


_LOCATIONS = ("body", "query", "path", "header")


def validation_field(loc: tuple[int | str, ...]) -> str | None:
    """`("body", "documents", 0, "doc_id")` -> `documents[0].doc_id`."""
    parts = list(loc[1:] if loc and loc[0] in _LOCATIONS else loc)
    name = ""
    for part in parts:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or None


def describe_validation(errors: Sequence[Any], body: Any = None) -> tuple[str, str | None]:
    """Pydantic's first error -> (message naming the field, dotted field path). `body`, the
    request body, lets a bad document be named by its key."""
    if not errors:
        return "invalid request", None
    first = errors[0]
    if first.get("type") == "json_invalid":
        return "request body is not valid JSON", None
    loc = tuple(first.get("loc", ()))
    if first.get("type") == "missing" and loc == ("body",):
        return "request body is missing: send a JSON object", None
    field = validation_field(loc)
    if first.get("type") == "extra_forbidden":
        message = f"unknown field '{field}'"
    else:
        message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
        message = message if field is None or message.startswith(field) else f"{field}: {message}"
    return _name_document(message, loc, body), field


def _name_document(message: str, loc: tuple[Any, ...], body: Any) -> str:
    """`documents[1].modified_at: ...` -> `document 1 (note:bad): ...`."""
    inner = loc[1:] if loc and loc[0] in _LOCATIONS else loc
    if len(inner) < 2 or inner[0] != "documents" or not isinstance(inner[1], int):
        return message
    raw = body.get("documents") if isinstance(body, dict) else None
    entry = raw[inner[1]] if isinstance(raw, list) and inner[1] < len(raw) else None
    name = "?"
    if isinstance(entry, dict):
        name = f"{entry.get('doc_type', '?')}:{entry.get('doc_id', '?')}"
    return f"document {inner[1]} ({name}): {message}"


# The code of an HTTP error the framework raises, as the error class of its status names it.
_HTTP_CODES = {
    error.status_code: error.code
    for error in (InvalidRequest, Unauthenticated, Forbidden, NotFound, PayloadTooLarge, NotReady)
} | {405: "method_not_allowed"}


_METHODS = ("DELETE", "GET", "PATCH", "POST", "PUT")


def allowed_methods(request: "Request") -> list[str]:
    """Every method some route serves at this path (Starlette's own 405 names only the methods
    of the first route whose path matched)."""
    from starlette.routing import Match

    return [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL
            for route in request.app.routes
        )
    ]


def install_error_handlers(
    app: "FastAPI",
    special_validation: Callable[["Request", "RequestValidationError"], "JSONResponse | None"]
    | None = None,
) -> None:
    """`special_validation` may answer a validation error its own way (the compat layer)."""
    from fastapi import Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException

    @app.exception_handler(ServiceError)
    async def on_service_error(_: Request, exc: ServiceError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        special = special_validation(request, exc) if special_validation else None
        if special is not None:
            return special
        message, field = describe_validation(exc.errors(), exc.body)
        return error_response(InvalidRequest.status_code, InvalidRequest.code, message, field)

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "error")
        response = error_response(exc.status_code, code, str(exc.detail))
        response.headers.update(exc.headers or {})
        if exc.status_code == 405:
            response.headers["Allow"] = ", ".join(allowed_methods(request))
        return response

    @app.exception_handler(Exception)
    async def on_unexpected(_: Request, exc: Exception) -> JSONResponse:
        return error_response(500, ServiceError.code, "internal server error")
