"""One error tree, rendered by one handler into the envelope of API.md."""

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException


class ServiceError(Exception):
    status_code = 500
    code = "internal_error"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def response(self) -> JSONResponse:
        return error_response(self.status_code, self.code, self.message, self.field)


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


class NotReady(ServiceError):
    status_code = 503
    code = "not_ready"


class ErrorDetail(BaseModel):
    code: str
    message: str
    field: str | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail


def error_response(
    status_code: int, code: str, message: str, field: str | None = None
) -> JSONResponse:
    body = ErrorBody(error=ErrorDetail(code=code, message=message, field=field))
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


def describe_validation(errors: Sequence[Any]) -> tuple[str, str | None]:
    """Pydantic's first error -> (message naming the field, dotted field path)."""
    if not errors:
        return "invalid request", None
    first = errors[0]
    if first.get("type") == "json_invalid":
        return "request body is not valid JSON", None
    if first.get("type") == "missing" and tuple(first.get("loc", ())) == ("body",):
        return "request body is missing: send a JSON object", None
    field = validation_field(tuple(first.get("loc", ())))
    message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
    named = field is None or message.startswith(field)
    return (message if named else f"{field}: {message}"), field


_HTTP_CODES = {
    400: "invalid_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    503: "not_ready",
}


def install_error_handlers(
    app: FastAPI,
    special_validation: Callable[[Request, RequestValidationError], JSONResponse | None]
    | None = None,
) -> None:
    """`special_validation` may answer a validation error its own way (the compat layer)."""

    async def on_service_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ServiceError)
        return exc.response()

    async def on_validation_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        special = special_validation(request, exc) if special_validation else None
        if special is not None:
            return special
        message, field = describe_validation(exc.errors())
        return error_response(400, "invalid_request", message, field)

    async def on_http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = _HTTP_CODES.get(exc.status_code, "error")
        return error_response(exc.status_code, code, str(exc.detail))

    async def on_unexpected(_: Request, exc: Exception) -> JSONResponse:
        return error_response(500, "internal_error", "internal server error")

    app.add_exception_handler(ServiceError, on_service_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.add_exception_handler(Exception, on_unexpected)
