"""Log output: plain text for a terminal (the default) or one JSON object per line
(`SEARCH_LOG_FORMAT=json`). Every line written while a request runs carries its id. What is
logged at INFO never holds a token, a key, a query or a document's text: lines name routes,
counts, timings and field names."""

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal, TextIO, get_args

from app.telemetry import request_id

LogFormat = Literal["plain", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = get_args(LogFormat)
# What a LogRecord holds by itself (and uvicorn's terminal colours); anything else on a record
# came as `extra=` and is written as a field of the JSON line.
_RECORD_FIELDS = {
    *vars(logging.makeLogRecord({})),
    *("message", "asctime", "request_id", "color_message"),
}
# Libraries that log every outgoing call at INFO (the verify and embedding servers' URLs).
_QUIET = ("httpx", "httpcore")


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.current.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = getattr(record, "request_id", None)
        if rid:
            line["request_id"] = rid
        line |= {k: v for k, v in vars(record).items() if k not in _RECORD_FIELDS}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class PlainFormatter(logging.Formatter):
    """`LEVEL logger [request id]: message`, the request id only within a request."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        rid = getattr(record, "request_id", None)
        tag = f" [{rid}]" if rid else ""
        return f"{record.levelname} {record.name}{tag}: {record.message}"


class ServiceHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever `sys.stderr` is at the time (a test runner swaps it)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _: TextIO) -> None:
        pass


def configure_logging(log_format: LogFormat) -> None:
    """The root logger at INFO through one service handler (replacing one set up before, so
    building several apps in a process leaves one)."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, ServiceHandler)]:
        root.removeHandler(handler)
    handler = ServiceHandler()
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter() if log_format == "json" else PlainFormatter())
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)  # a warning is a log line too, not free text on stderr
    for name in _QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
