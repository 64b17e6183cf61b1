"""The exit codes of `astrolabe-search` (docs/deployment.md lists them), and the code of a store
that cannot be opened."""

EXIT_FAILED = 1  # the command could not do its work (a backup that cannot be made, ...)
EXIT_REFUSED = 2  # the configuration does not allow a start
EXIT_STARTUP_FAILED = 3  # uvicorn's code for a failed start
EXIT_DATA_DIR_IN_USE = 4
EXIT_DATA_DIR_UNUSABLE = 5
EXIT_ENGINE_UNAVAILABLE = 6
# Written with other settings or by a newer release: the line says what to run.
EXIT_INDEX_OUTDATED = 7
EXIT_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports it


def exit_code(error: Exception) -> int:
    from app.store.errors import (
        CopyFailed,
        DataDirectoryInUse,
        DataDirectoryUnusable,
        EngineUnavailable,
        IndexOutdated,
    )

    for kind, code in (
        (IndexOutdated, EXIT_INDEX_OUTDATED),
        (DataDirectoryInUse, EXIT_DATA_DIR_IN_USE),
        (DataDirectoryUnusable, EXIT_DATA_DIR_UNUSABLE),
        (EngineUnavailable, EXIT_ENGINE_UNAVAILABLE),
        (CopyFailed, EXIT_FAILED),
    ):
        if isinstance(error, kind):
            return code
    return EXIT_STARTUP_FAILED
