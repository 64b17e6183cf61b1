"""`astrolabe-search serve`: the start-up choreography. The serving shard server is launched
first (`start_early`), so its imports and the opening of its shard run beside the web stack's
imports; the store and the local model are opened here, not in the lifespan, so a refused start
is one line, not a trace."""

import argparse
import gc
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from types import FrameType
from typing import TYPE_CHECKING

from app.auth import DEV_PRINCIPAL, Authenticator, new_dev_token
from app.cli.exits import EXIT_REFUSED, EXIT_STARTUP_FAILED
from app.config import Settings
from app.store.open import Use, open_store, start_early

if TYPE_CHECKING:
    from pathlib import Path

    from fastapi import FastAPI

    from app.embeddings.dense import DenseEncoder, MiniLMEncoder
    from app.state import AppState

GRACEFUL_SECONDS = 10  # in-flight requests get this long after SIGTERM; then they are cut


def serve(args: argparse.Namespace) -> int:
    # No collection while the web stack is imported: each full one walked every object made so
    # far (~100-150 ms of a start in all); _run_server turns it back on before serving.
    gc.disable()
    try:
        return _start_serving(args)
    finally:
        gc.enable()


def _start_serving(args: argparse.Namespace) -> int:
    from app.auth import build_authenticator

    settings = Settings()
    try:
        authenticator = build_authenticator(settings)
    except ValueError as exc:
        print(f"refusing to start: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if not _authenticates(authenticator, args):
        return EXIT_REFUSED
    early = start_early(settings)
    from app.main import create_app

    dense: DenseEncoder | None = None
    if settings.embedding_url:  # probed before serving: a mismatch must stop the start
        from app.embeddings.choose import open_remote_encoder
        from app.embeddings.remote import EmbeddingServerError, EmbeddingUnavailable

        try:
            dense = open_remote_encoder(settings.embedding_url, settings)
        except (EmbeddingServerError, EmbeddingUnavailable) as exc:
            print(f"refusing to start: {exc}", file=sys.stderr)
            if early is not None:
                early.discard()
            return EXIT_REFUSED
    with ThreadPoolExecutor(1, thread_name_prefix="astrolabe-model") as pool:
        loading = _load_search_model(settings, pool)
        store = open_store(settings, Use.SERVE, early)
        dense = dense or _loaded(loading)
    return _run_server(
        create_app(settings, authenticator=authenticator, dense=dense, store=store), args
    )


def _authenticates(authenticator: Authenticator, args: argparse.Namespace) -> bool:
    """With `--dev`, a one-time token with both scopes, printed with a ready curl line; else a
    configured JWT secret or API keys file, or the start is refused."""
    if args.dev:
        token = new_dev_token()
        authenticator.add_key(token, DEV_PRINCIPAL)
        base = f"http://{args.host}:{args.port}"
        print(
            f"Dev token (user 'dev', group 'demo', scopes search+index), valid while this runs:\n"
            f"  {token}\n"
            f"Try:\n  curl -s -H 'Authorization: Bearer {token}'"
            f" -H 'Content-Type: application/json'"
            f' -d \'{{"query": "quarterly budget"}}\' {base}/api/v1/search\n'
            f"Search page, signed in: {base}/viz#token={token}\n"
            f"  (the token stays in the fragment, which the browser never sends; the page takes"
            f" it and clears it from the address bar)",
            flush=True,
        )
        return True
    if not authenticator.configured:
        print(
            "refusing to start: set SEARCH_JWT_SECRET or SEARCH_API_KEYS_FILE, or pass --dev",
            file=sys.stderr,
        )
        return False
    return True


def _load_search_model(
    settings: Settings, pool: ThreadPoolExecutor
) -> "Future[MiniLMEncoder] | None":
    """The local model with its search session, opened in `pool` while the engine opens its
    shard (opened during the web stack's imports instead, it slowed them by more than it took:
    the engine process's own start has the other core); the documents' session opens when the
    first document is embedded.
    None where there is nothing to open here: a remote encoder, or a model still to be exported
    (the service's loader does it and reports it while /healthz answers)."""
    from app.embeddings.model_files import exported

    if settings.embedding_url or not exported(settings.model_dir):
        return None
    return pool.submit(_for_searches, settings.model_dir)


def _for_searches(model_dir: "Path | None") -> "MiniLMEncoder":
    from app.embeddings.dense import MiniLMEncoder

    model = MiniLMEncoder(model_dir)
    model.queries  # noqa: B018 (the property opens the int8 session)
    return model


def _loaded(loading: "Future[MiniLMEncoder] | None") -> "MiniLMEncoder | None":
    """The model opened in the background; None leaves it to the loader, which tries again
    and reports what failed."""
    if loading is None:
        return None
    try:
        return loading.result()
    except Exception:
        return None


def _run_server(app: "FastAPI", args: argparse.Namespace) -> int:
    """uvicorn, told to stop the indexer as soon as SIGTERM arrives (before it waits for the
    requests in flight, which may be waiting for the indexer)."""
    import uvicorn

    state: AppState = app.state.astrolabe

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            state.begin_shutdown()
            super().handle_exit(sig, frame)

    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
        loop="uvloop",  # C loop and parser: the event loop shares the GIL with every search
        http="httptools",
        # The service's own logging (SEARCH_LOG_FORMAT) and access lines, which leave out the
        # query string (it may hold a search's text).
        log_config=None,
        access_log=False,
    )
    server = Server(config)
    # The start-up's objects (the web stack, the models of the filter language) live as long as
    # the process: moved out of the collector's reach, a full collection no longer walks them
    # (95 ms with every search waiting, half a second after /readyz, without this).
    gc.freeze()
    gc.enable()
    server.run()
    return 0 if server.started else EXIT_STARTUP_FAILED
