"""Each store error a command can meet ends it with its own exit code (docs/deployment.md)."""

import pytest

from app.cli import exits
from app.store import errors


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (errors.IndexOutdated("x"), exits.EXIT_INDEX_OUTDATED),
        (errors.DataDirectoryInUse("x"), exits.EXIT_DATA_DIR_IN_USE),
        (errors.DataDirectoryUnusable("x"), exits.EXIT_DATA_DIR_UNUSABLE),
        (errors.EngineUnavailable("x"), exits.EXIT_ENGINE_UNAVAILABLE),
        (errors.CopyFailed("x"), exits.EXIT_FAILED),
        (errors.StoreError("x"), exits.EXIT_STARTUP_FAILED),
    ],
)
def test_each_store_error_has_its_exit_code(error: Exception, code: int) -> None:
    assert exits.exit_code(error) == code
