"""The error of a backup or restore, apart from the modules that make them: the CLI catches it
before any heavy import (a start of `serve` must launch its engine first)."""

from app.errors import ServiceError


class BackupError(ServiceError):
    """A backup or restore that cannot go on: nothing half-done was left looking whole."""

    status_code = 409
    code = "backup_failed"
