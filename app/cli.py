"""`astrolabe-search serve | ingest | demo | migrate | export-model | optimize |
reindex-sparse | backup | restore | reindex`."""

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, TypeVar

from app.auth import DEV_PRINCIPAL, new_dev_token
from app.config import Settings
from app.telemetry.logs import configure_logging

if TYPE_CHECKING:
    import subprocess

    from fastapi import FastAPI

    from app.embeddings.dense import DenseEncoder
    from app.ingest.documents import Document
    from app.state import AppState
    from app.store.base import Store
    from app.store.launch import Launcher

EXIT_REFUSED = 2  # the configuration does not allow a start
EXIT_STARTUP_FAILED = 3  # uvicorn's code for a failed start
EXIT_DATA_DIR_IN_USE = 4
EXIT_DATA_DIR_UNUSABLE = 5
EXIT_ENGINE_UNAVAILABLE = 6
EXIT_INDEX_OUTDATED = (
    7  # written with other settings or by a newer release: the line says what to run
)
GRACEFUL_SECONDS = 10  # in-flight requests get this long after SIGTERM; then they are cut
NO_OPTIMIZE_HELP = (
    "do not build the HNSW index at the end, even past SEARCH_HNSW_THRESHOLD chunks outside it"
)
SERVICE_URL_ENV = "SEARCH_SERVICE_URL"  # where `backup` finds the running service
SERVICE_TOKEN_ENV = "SEARCH_SERVICE_TOKEN"
DEMO_CORPUS = Path(__file__).resolve().parent / "demo" / "corpus.jsonl"


def _serve(args: argparse.Namespace) -> int:
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
    elif not authenticator.configured:
        print(
            "refusing to start: set SEARCH_JWT_SECRET or SEARCH_API_KEYS_FILE, or pass --dev",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    launched = None if settings.qdrant_url else _launch_engine(settings)
    from app.main import create_app

    dense: DenseEncoder | None = None
    if settings.embedding_url:  # probed before serving: a mismatch must stop the start
        from app.embeddings.choose import open_remote_encoder
        from app.embeddings.remote import EmbeddingServerError, EmbeddingUnavailable

        try:
            dense = open_remote_encoder(settings.embedding_url, settings)
        except (EmbeddingServerError, EmbeddingUnavailable) as exc:
            print(f"refusing to start: {exc}", file=sys.stderr)
            if launched is not None:
                _stop_launched(launched[1])
            return EXIT_REFUSED
    # Opened here, not in the lifespan: a refusal is one line, not a trace.
    store, dense = _open_store_and_model(settings, launched, dense)
    return _run_server(
        create_app(settings, authenticator=authenticator, dense=dense, store=store), args
    )


def _open_store_and_model(
    settings: Settings,
    launched: "tuple[Launcher, subprocess.Popen[str]] | None",
    dense: "DenseEncoder | None",
) -> "tuple[Store, DenseEncoder | None]":
    """The store, and the local model loaded while the engine opens its shard (the model
    was the last ~0.2 s of a start once the engine was ready). A model still to be exported,
    or one that fails to load, is left to the service's loader, which reports it while
    /healthz answers."""
    from concurrent.futures import ThreadPoolExecutor

    from app.embeddings.model_files import exported

    if dense is not None or not exported(settings.model_dir):
        return open_serving_store(settings, launched), dense
    from app.embeddings.dense import MiniLMEncoder

    with ThreadPoolExecutor(1, thread_name_prefix="astrolabe-model") as pool:
        loading = pool.submit(MiniLMEncoder, settings.model_dir)
        store = open_serving_store(settings, launched)
        try:
            return store, loading.result()
        except Exception:  # the loader tries again, and reports it
            return store, None


def _launch_engine(settings: Settings) -> "tuple[Launcher, subprocess.Popen[str]]":
    """The served engine, started before the web stack is imported: its imports and the
    opening of the shard run meanwhile (a refused start ends this process, and the engine with
    it)."""
    from app.store.launch import Launcher

    launcher = Launcher.new(settings.data_dir, settings.collection, settings.min_free_bytes)
    return launcher, launcher.launch(launcher.socket(1))


def _stop_launched(engine: "subprocess.Popen[str]") -> None:
    """The early engine of a start refused after it was launched."""
    engine.kill()
    engine.wait()
    if engine.stdout is not None:
        engine.stdout.close()


def open_serving_store(
    settings: Settings, launched: "tuple[Launcher, subprocess.Popen[str]] | None" = None
) -> "Store":
    """Server mode: the Qdrant client. Embedded: the engine in processes of its own, which
    rebuild its HNSW graph while it serves (app/store/embedded.py)."""
    if settings.qdrant_url:
        from app.store.open import open_store

        return open_store(settings)
    from app.store.embedded import EmbeddedEngine

    return EmbeddedEngine(settings, launched=launched).start()


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


def _index_locally(
    documents: "Callable[[Store], Iterator[Document | None]]",
    total: int,
    label: str,
    optimize: bool,
) -> int:
    """Index straight into the store (no server): accept, embed, with a progress bar (one step a
    document; None: one skipped); then build the HNSW index if enough chunks are outside it
    (`optimize`). The embedded engine locks its directory, so run this while `serve` is
    stopped."""
    from tqdm import tqdm

    from app.embeddings.choose import open_dense_encoder
    from app.embeddings.sparse import Bm25Encoder
    from app.ingest.pipeline import Indexer
    from app.store.open import open_store

    settings = Settings()
    store = open_store(settings, facet_index=False)
    try:
        indexer = Indexer(store, open_dense_encoder(settings), Bm25Encoder())
        indexed = chunks = 0
        started = time.perf_counter()
        with tqdm(total=total, desc=label, unit="doc") as bar:
            for batch in _batches(documents(store), 32):
                found = [document for document in batch if document is not None]
                if found:
                    chunks += sum(indexer.index(indexer.accept(found)).values())
                indexed += len(found)
                bar.update(len(batch))
        seconds = time.perf_counter() - started
        print(
            f"indexed {indexed} documents, {chunks} chunks in {seconds:.1f} s"
            f" ({chunks / max(seconds, 1e-9):.1f} chunks/s)"
        )
        refit_sparse(store)
        if optimize:
            optimize_if_worth_it(store, settings.hnsw_threshold, chunks)
    finally:
        store.close()
    return 0


T = TypeVar("T")


def _batches(items: Iterator[T], size: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _demo(args: argparse.Namespace) -> int:
    from app.ingest.models import MAX_BATCH, validate_batch

    lines = [line for line in DEMO_CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    raw = [json.loads(line) for line in lines]
    if not args.force and _already_indexed(raw):
        print(f"demo corpus already loaded ({len(raw)} documents); --force reloads it")
        return 0
    documents = [doc for batch in _batches(iter(raw), MAX_BATCH) for doc in validate_batch(batch)]
    return _index_locally(
        lambda _: iter(documents), len(documents), "demo corpus", not args.no_optimize
    )


def _already_indexed(documents: list[dict[str, object]]) -> bool:
    from app.filters.selectors import documents_with_keys
    from app.store.fields import doc_key
    from app.store.open import open_store

    keys = [doc_key(str(d["doc_type"]), str(d["doc_id"])) for d in documents]
    store = open_store(Settings(), facet_index=False)
    try:
        return store.count(documents_with_keys(keys)) == len(set(keys))
    finally:
        store.close()


def _ingest(args: argparse.Namespace) -> int:
    """Every supported file under the paths, read by the extraction workers (the same as the
    HTTP upload's); a file that cannot be read is reported and skipped, a file indexed at its
    current modification time is skipped."""
    from app.ingest.files import Refused, documents_from_files, find_files, is_current_in
    from app.ingest.service import extractor_for

    files = find_files([Path(p) for p in args.paths])
    if not files:
        print("no readable files found", file=sys.stderr)
        return 1
    extractor = extractor_for(Settings())
    refused: list[Refused] = []

    def documents(store: "Store") -> "Iterator[Document | None]":
        for item in documents_from_files(files, args.owner, extractor, is_current_in(store)):
            if isinstance(item, Refused):
                refused.append(item)
                yield None
            else:
                yield item

    try:
        code = _index_locally(documents, len(files), "ingest", not args.no_optimize)
    finally:
        extractor.close()
    for item in refused[:20]:
        print(f"skipped {item.path}: {item.code}: {item.message}", file=sys.stderr)
    if len(refused) > 20:
        print(f"... and {len(refused) - 20} more files skipped", file=sys.stderr)
    return code


def _migrate(args: argparse.Namespace) -> int:
    """Copy the embedded index (run while `serve` is stopped: Edge locks its directory)."""
    from tqdm import tqdm

    from app.migrate import Checkpoint, MigrationMismatch, copy_points, count_points, verify
    from app.store.edge import EdgeStore
    from app.store.layout import IndexLayout
    from app.store.server import ServerStore

    settings = Settings()
    if not IndexLayout.of(settings.data_dir, settings.collection).exists:
        print(f"no embedded index at {settings.data_dir / settings.collection}", file=sys.stderr)
        return 1
    collection = args.collection or settings.collection
    if args.api_key:
        settings = settings.model_copy(update={"qdrant_api_key": args.api_key})
    source = EdgeStore(settings.data_dir, settings.collection, facet_index=False)
    target: ServerStore | None = None
    try:
        target = ServerStore.from_settings(args.to, collection, settings)
        checkpoint = Checkpoint(
            settings.data_dir / f"{settings.collection}.migrate.json", f"{args.to}#{collection}"
        )
        _, already = checkpoint.load()
        with tqdm(total=count_points(source).points, initial=already, unit="point") as bar:
            copy_points(source, target, checkpoint, args.batch_size, bar.update)
        try:
            counts = verify(source, target)
        except MigrationMismatch as exc:
            print(f"migration not verified: {exc}", file=sys.stderr)
            return 1
        checkpoint.clear()
    finally:
        if target is not None:
            target.close()
        source.close()
    print(
        f"copied {counts.points} points ({counts.chunks} chunks, {counts.pending} placeholders)"
        f" to collection '{collection}' at {args.to}; counts verified. Serve with"
        f" SEARCH_QDRANT_URL={args.to} SEARCH_COLLECTION={collection}"
    )
    return 0


def _backup(args: argparse.Namespace) -> int:
    """Through the running service (`--url`), else from the stopped index or, in server mode,
    from Qdrant's snapshot API (docs/deployment.md, Backup and restore)."""
    from app.backup.make import make_backup
    from app.backup.stream import download
    from app.store.errors import DataDirectoryInUse
    from app.store.layout import IndexLayout
    from app.store.open import open_store

    started = time.perf_counter()
    dest = Path(args.dest)
    settings = Settings()
    if args.url:
        if not args.token:
            print(
                f"a backup through {args.url} needs a token with scope index:"
                f" --token or {SERVICE_TOKEN_ENV}",
                file=sys.stderr,
            )
            return EXIT_REFUSED
        manifest = download(args.url, args.token, dest)
    else:
        if (
            not settings.qdrant_url
            and not IndexLayout.of(settings.data_dir, settings.collection).exists
        ):
            print(
                f"no embedded index at {settings.data_dir / settings.collection}", file=sys.stderr
            )
            return 1
        try:
            store = open_store(settings, facet_index=False, check_settings=False)
        except DataDirectoryInUse:
            print(
                f"the index in {settings.data_dir} is in use by a running service: back it up"
                f" through it with --url and --token (or {SERVICE_URL_ENV} and"
                f" {SERVICE_TOKEN_ENV})",
                file=sys.stderr,
            )
            return EXIT_DATA_DIR_IN_USE
        try:
            manifest = make_backup(store, dest, settings.collection)
        finally:
            store.close()
    counts = manifest.counts
    print(
        f"backed up {counts.documents} documents ({counts.chunks} chunks, {counts.points} points,"
        f" {counts.pending} pending) to {dest} in {time.perf_counter() - started:.1f} s;"
        f" {len(manifest.files)} files, checksums in {dest / 'manifest.json'}"
    )
    return 0


def _restore(args: argparse.Namespace) -> int:
    from app.backup.restore import restore

    started = time.perf_counter()
    settings = Settings()
    manifest = restore(Path(args.src), settings)
    where = settings.qdrant_url or settings.data_dir / settings.collection
    counts = manifest.counts
    print(
        f"restored {counts.documents} documents ({counts.chunks} chunks, {counts.points} points)"
        f" into {where} in {time.perf_counter() - started:.1f} s; counts verified"
    )
    return 0


def _reindex(args: argparse.Namespace) -> int:
    """Re-embed the stopped embedded index with this release's settings (app.reindex)."""
    from tqdm import tqdm

    from app.embeddings.choose import open_dense_encoder
    from app.reindex import reindex
    from app.store.layout import IndexLayout

    settings = Settings()
    if settings.qdrant_url:
        print("reindex works on the embedded index; server mode records no settings")
        return 0
    if not IndexLayout.of(settings.data_dir, settings.collection).exists:
        print(f"no embedded index at {settings.data_dir / settings.collection}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    with tqdm(desc="reindex", unit="doc") as bar:
        done = reindex(
            settings.data_dir,
            settings.collection,
            open_dense_encoder(settings),
            force=args.force,
            progress=bar.update,
        )
    if done is None:
        print(
            "the index already matches this release's settings: nothing to do (--force redoes it)"
        )
        return 0
    if done.sparse_only:
        print(
            f"re-encoded the BM25 vectors of {done.chunks} chunks (dense vectors kept) in"
            f" {time.perf_counter() - started:.1f} s; changed: {', '.join(done.changed)}"
        )
        return 0
    resumed = f", resuming after {done.resumed_at}" if done.resumed_at else ""
    print(
        f"reindexed {done.documents} documents ({done.chunks} chunks{resumed}) in"
        f" {time.perf_counter() - started:.1f} s; changed: {', '.join(done.changed) or 'nothing'}"
    )
    return 0


def _export_model(args: argparse.Namespace) -> int:
    from app.embeddings.model_files import exported, onnx_path

    model_dir = args.model_dir or Settings().model_dir
    target = onnx_path(model_dir)
    if exported(model_dir) and not args.force:
        print(f"ONNX model already exported: {target}")
        return 0
    from app.embeddings.export import export_onnx

    started = time.perf_counter()
    export_onnx(target)
    print(f"exported the ONNX model to {target} in {time.perf_counter() - started:.1f} s")
    return 0


def _optimize(args: argparse.Namespace) -> int:
    """Merge segments and build the HNSW index of the embedded engine, offline: it blocks the
    process (GIL held) for minutes at 100k chunks, so `serve` never does it."""
    from app.store.open import open_store

    store = open_store(Settings(), facet_index=False)
    try:
        refit_sparse(store)
        if store.vector_index() is None:
            print("no HNSW index to build: a Qdrant server builds its indexes by itself")
            return 0
        _build_hnsw(store)
    finally:
        store.close()
    return 0


def _reindex_sparse(args: argparse.Namespace) -> int:
    """Re-encode the stored BM25 vectors with the index's live mean chunk length when it
    drifted past the bound (`--force`: in any case); then, on the embedded engine, build the
    HNSW index if the rewrite left enough chunks outside it."""
    from app.store.open import open_store

    settings = Settings()
    store = open_store(settings, facet_index=False)
    try:
        if refit_sparse(store, force=args.force):
            optimize_if_worth_it(store, settings.hnsw_threshold, 0)
    finally:
        store.close()
    return 0


def refit_sparse(store: "Store", force: bool = False) -> int:
    """`app.ingest.sparse_fit.refit` with a progress bar and one line saying what it did;
    returns the chunks re-encoded."""
    from tqdm import tqdm

    from app.ingest.sparse_fit import DRIFT_BOUND, refit

    with tqdm(desc="BM25 re-encode", unit="chunk", leave=False) as bar:
        done = refit(store, force=force, progress=bar.update)
    if done.after is None:
        print("BM25: no chunks indexed, nothing to fit")
    elif not done.reencoded:
        print(
            f"BM25: mean chunk length {done.after.avg_len:.1f} tokens, live mean"
            f" {done.live_mean:.1f} (within {DRIFT_BOUND:.0%}): sparse vectors kept"
        )
    else:
        was = f" (was {done.before.avg_len:.1f})" if done.before is not None else ""
        print(
            f"BM25: re-encoded {done.reencoded} chunks with mean chunk length"
            f" {done.after.avg_len:.1f} tokens{was}"
        )
    return done.reencoded


def optimize_if_worth_it(store: "Store", threshold: int, written: int) -> None:
    """After a bulk load: build the HNSW index once the chunks outside it are enough to make
    an exact scan slow (SEARCH_HNSW_THRESHOLD, measured in docs/deployment.md). The chunks just
    written are all outside it (the engine's estimate misses re-sent ones)."""
    index = store.vector_index()
    if index is None:
        return
    outside = max(index.plain, written)
    if outside < max(threshold, 1):
        return
    print(
        f"{outside} chunks are outside the HNSW index (threshold {threshold}): building it"
        " (skip with --no-optimize)",
        flush=True,
    )
    _build_hnsw(store)


def _build_hnsw(store: "Store") -> None:
    from app.store.edge import EdgeStore

    if not isinstance(store, EdgeStore):
        return
    started = time.perf_counter()
    store.optimize()
    index = store.vector_index()
    print(
        f"optimized in {time.perf_counter() - started:.1f} s: {index.hnsw} chunks in an HNSW"
        f" index, {index.plain} outside it"
    )


def main(argv: Sequence[str] | None = None) -> None:
    configure_logging(Settings().log_format)
    parser = argparse.ArgumentParser(prog="astrolabe-search")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--dev", action="store_true", help="print a one-time dev token")
    serve.set_defaults(run=_serve)
    ingest = commands.add_parser("ingest", help="index files and folders from disk")
    ingest.add_argument("paths", nargs="+")
    ingest.add_argument("--owner", default="dev", help="owner of the ingested documents")
    ingest.add_argument("--no-optimize", action="store_true", help=NO_OPTIMIZE_HELP)
    ingest.set_defaults(run=_ingest)
    demo = commands.add_parser("demo", help="load the bundled demo corpus")
    demo.add_argument("--force", action="store_true", help="re-index even if already loaded")
    demo.add_argument("--no-optimize", action="store_true", help=NO_OPTIMIZE_HELP)
    demo.set_defaults(run=_demo)
    migrate = commands.add_parser(
        "migrate", help="copy the embedded index to a Qdrant server (no re-embedding)"
    )
    migrate.add_argument("--to", required=True, metavar="URL", help="the Qdrant server")
    migrate.add_argument("--collection", help="target collection (default: SEARCH_COLLECTION)")
    migrate.add_argument("--api-key", help="the server's API key (default: SEARCH_QDRANT_API_KEY)")
    migrate.add_argument("--batch-size", type=int, default=256, help="points per write")
    migrate.set_defaults(run=_migrate)
    export = commands.add_parser(
        "export-model",
        help="export the shipped MiniLM weights to ONNX (needs the export extra: torch)",
    )
    export.add_argument("--model-dir", type=Path, help="default: SEARCH_MODEL_DIR or the venv")
    export.add_argument("--force", action="store_true", help="export again even if present")
    export.set_defaults(run=_export_model)
    optimize = commands.add_parser(
        "optimize",
        help="re-fit BM25 if drifted, build the HNSW index offline (stop `serve` first: it"
        " takes minutes)",
    )
    optimize.set_defaults(run=_optimize)
    reindex_sparse = commands.add_parser(
        "reindex-sparse",
        help="re-encode the BM25 vectors from the stored text when the mean chunk length"
        " drifted past 25 % (no dense model run; resumes where an interrupted run stopped)",
    )
    reindex_sparse.add_argument(
        "--force", action="store_true", help="re-encode even within the bound"
    )
    reindex_sparse.set_defaults(run=_reindex_sparse)
    backup = commands.add_parser(
        "backup", help="back up the index (through the running service with --url)"
    )
    backup.add_argument("dest", help="a new or empty directory")
    backup.add_argument(
        "--url",
        default=os.environ.get(SERVICE_URL_ENV),
        help=f"the running service, e.g. http://127.0.0.1:8000 (default: {SERVICE_URL_ENV})",
    )
    backup.add_argument(
        "--token",
        default=os.environ.get(SERVICE_TOKEN_ENV),
        help=f"a token with scope index (default: {SERVICE_TOKEN_ENV}; the variable keeps it"
        " out of the process list)",
    )
    backup.set_defaults(run=_backup)
    restore = commands.add_parser(
        "restore", help="restore a backup into an empty SEARCH_DATA_DIR (or empty collection)"
    )
    restore.add_argument("src", help="a directory `backup` wrote")
    restore.set_defaults(run=_restore)
    reindex = commands.add_parser(
        "reindex",
        help="re-embed the stored text with this release's settings (stop `serve` first;"
        " resumes where an interrupted run stopped)",
    )
    reindex.add_argument("--force", action="store_true", help="even if the settings match")
    reindex.set_defaults(run=_reindex)
    args = parser.parse_args(argv)
    sys.exit(_run(args))


def _run(args: argparse.Namespace) -> int:
    """The command, with a store that cannot be opened reported in one line (docs/deployment.md
    lists the exit codes)."""
    from app.backup.errors import BackupError
    from app.store.errors import StoreError

    try:
        code: int = args.run(args)
    except StoreError as exc:
        print(f"astrolabe-search: {exc.message}", file=sys.stderr)
        return _exit_code(exc)
    except BackupError as exc:
        print(f"astrolabe-search: {exc.message}", file=sys.stderr)
        return 1
    return code


def _exit_code(error: Exception) -> int:
    from app.store.errors import (
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
    ):
        if isinstance(error, kind):
            return code
    return EXIT_STARTUP_FAILED
