"""The request id: the client's `X-Request-ID` when it is a sane value, else one made here. It
lives in a context variable while the request runs, so every log line written for the request
carries it (threads started by `run_in_threadpool` or `asyncio.to_thread` inherit it)."""

import re
import uuid
from contextvars import ContextVar
from typing import Any

HEADER = "X-Request-ID"
# 1..128 characters that are safe in a log line, a header and a URL: no spaces, quotes or
# control characters.
SAFE = re.compile(r"[A-Za-z0-9._~:/+=@-]{1,128}")
current: ContextVar[str | None] = ContextVar("request_id", default=None)


def request_id_from(value: str | None) -> str:
    """The client's id when it is safe; otherwise a new one (never a refusal)."""
    if value is not None and SAFE.fullmatch(value):
        return value
    return uuid.uuid4().hex


def document_request_id(schema: dict[str, Any]) -> None:
    """The OpenAPI document: every operation takes `X-Request-ID` and every response carries
    it."""
    headers = schema.setdefault("components", {}).setdefault("headers", {})
    headers[HEADER] = {
        "description": "The request's id: the client's `X-Request-ID` when it was 1..128 safe"
        " characters, else a generated one. Every log line of the request carries it.",
        "required": True,
        "schema": {"type": "string", "pattern": f"^{SAFE.pattern}$"},
    }
    parameter = {
        "name": HEADER,
        "in": "header",
        "required": False,
        "description": "An id for this request, echoed in the response and written in its log"
        " lines: 1..128 of `A-Z a-z 0-9 . _ ~ : / + = @ -`; any other value is replaced by a"
        " generated id (never refused).",
        "schema": {"type": "string"},
    }
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            operation.setdefault("parameters", []).append(parameter)
            for response in operation.get("responses", {}).values():
                response.setdefault("headers", {})[HEADER] = {
                    "$ref": f"#/components/headers/{HEADER}"
                }
