"""Why a file is refused: a 422 with a stable code the client can act on, or a 413 for a file
(or an archive's contents) past its bound. A refused file stores nothing."""

from app.errors import PayloadTooLarge, ServiceError


class FileRefused(ServiceError):
    """422: the file cannot be indexed as sent."""

    status_code = 422
    code = "unreadable"


class Encrypted(FileRefused):
    code = "encrypted"


class Unreadable(FileRefused):
    code = "unreadable"


class UnsupportedFormat(FileRefused):
    code = "unsupported_format"


class TooLarge(PayloadTooLarge):
    """413: the upload, or what an archive expands to, is past its bound."""


REFUSALS: dict[str, type[ServiceError]] = {
    error.code: error for error in (Encrypted, Unreadable, UnsupportedFormat, TooLarge)
}


def refusal(code: str, message: str) -> ServiceError:
    """The error of a code (as the extraction worker reports it across the process boundary)."""
    return REFUSALS.get(code, Unreadable)(message)
