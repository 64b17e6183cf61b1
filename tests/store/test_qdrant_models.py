"""The engine process uses qdrant-client's models without importing its clients (each test runs
a fresh interpreter: the test process has imported the clients long before)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

CLIENT_MODULES = ("qdrant_client.qdrant_client", "qdrant_client.async_qdrant_client")
# Imported by `qdrant_client.models` (its gRPC conversions, fastembed's types), never used here:
# ~0.14 s of each process's start; and an HTTP client, which only an embedding server, the
# Nextcloud connector or verify-on-read need (~0.12 s).
UNUSED_MODULES = (
    *CLIENT_MODULES,
    "qdrant_client.grpc",
    "qdrant_client.fastembed_common",
    "httpx",
)


def _run(
    code: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_models_build_pickle_and_translate_without_the_clients() -> None:
    done = _run(
        """
        import pickle, sys
        from app.store.qdrant_models import import_models_only
        import_models_only()
        from qdrant_client.http import models
        from app.filters.selectors import readable_by
        from app.store import translate
        rule = models.Filter(must=[readable_by(["user:alice", "group:staff"])])
        prefetch = models.Prefetch(
            query=models.SparseVector(indices=[3], values=[0.5]), using="bm25", filter=rule
        )
        assert pickle.loads(pickle.dumps(prefetch)) == prefetch
        print(type(translate.filter_(rule)).__name__)
        print(sorted(set(sys.modules) & {"qdrant_client.qdrant_client",
                                         "qdrant_client.async_qdrant_client"}))
        try:
            from qdrant_client import QdrantClient
        except ImportError:
            print("no client")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["Filter", "[]", "no client"]


def test_the_engine_process_imports_no_client_and_no_settings() -> None:
    done = _run(
        f"""
        import runpy, sys
        sys.argv = ["engine", "--help"]
        try:
            runpy.run_module("app.engine_child", run_name="__main__", alter_sys=True)
        except SystemExit as exit:
            assert exit.code == 0
        print("qdrant_client.http.models.models" in sys.modules)
        print([name for name in {UNUSED_MODULES!r} if name in sys.modules])
        print("app.config" in sys.modules)  # told its settings: it reads none (~0.1 s)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-4:-1] == ["True", "[]", "False"]


def test_serve_on_the_embedded_engine_imports_no_client(tmp_path: Path) -> None:
    """The whole start of `serve` (engine launched, store and model opened, app built), up to
    the server's own start, without the clients."""
    done = _run(
        f"""
        import os, sys
        from app.cli import main, serving

        def started(app, args):
            print(type(app).__name__, [name for name in {UNUSED_MODULES!r} if name in sys.modules])
            sys.stdout.flush()
            os._exit(0)  # the engine process follows (PR_SET_PDEATHSIG)

        serving._run_server = started
        main(["serve", "--dev", "--port", "0"])
        """,
        env={**os.environ, "SEARCH_DATA_DIR": str(tmp_path / "data")},
    )
    assert "FastAPI []" in done.stdout.splitlines(), done.stdout + done.stderr
