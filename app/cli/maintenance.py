"""`astrolabe-search migrate | backup | restore | reindex | export-model`: the index copied
elsewhere, backed up, restored, re-embedded with this release's settings, and the model's ONNX
export. Each opens the store through `app.store.open`."""

import argparse
import sys
import time
from pathlib import Path

from app.cli.exits import EXIT_DATA_DIR_IN_USE, EXIT_REFUSED
from app.config import Settings

SERVICE_URL_ENV = "SEARCH_SERVICE_URL"  # where `backup` finds the running service
SERVICE_TOKEN_ENV = "SEARCH_SERVICE_TOKEN"


def _no_embedded_index(settings: Settings) -> bool:
    from app.store.open import embedded_index_exists

    if embedded_index_exists(settings):
        return False
    print(f"no embedded index at {settings.data_dir / settings.collection}", file=sys.stderr)
    return True


def migrate(args: argparse.Namespace) -> int:
    """Copy the embedded index (run while `serve` is stopped: Edge locks its directory)."""
    from tqdm import tqdm

    from app.backup.migrate import Checkpoint, MigrationMismatch, copy_points, count_points, verify
    from app.store.base import Store
    from app.store.open import Use, open_store

    settings = Settings().model_copy(update={"qdrant_url": None})
    if _no_embedded_index(settings):
        return 1
    collection = args.collection or settings.collection
    server = settings.model_copy(update={"qdrant_url": args.to, "collection": collection})
    if args.api_key:
        server = server.model_copy(update={"qdrant_api_key": args.api_key})
    source = open_store(settings, Use.COMMAND)
    target: Store | None = None
    try:
        target = open_store(server, Use.COMMAND)
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


def backup(args: argparse.Namespace) -> int:
    """Through the running service (`--url`), else from the stopped index or, in server mode,
    from Qdrant's snapshot API (docs/deployment.md, Backup and restore)."""
    from app.backup.make import make_backup
    from app.backup.stream import download
    from app.store.errors import DataDirectoryInUse
    from app.store.open import Use, open_store

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
        if not settings.qdrant_url and _no_embedded_index(settings):
            return 1
        try:
            store = open_store(settings, Use.AS_IS)
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


def restore(args: argparse.Namespace) -> int:
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


def reindex(args: argparse.Namespace) -> int:
    """Re-embed the stopped embedded index with this release's settings (app.ingest.reindex)."""
    from tqdm import tqdm

    from app.embeddings.choose import open_dense_encoder
    from app.ingest.reindex import reindex

    settings = Settings()
    if settings.qdrant_url:
        print("reindex works on the embedded index; server mode records no settings")
        return 0
    if _no_embedded_index(settings):
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


def export_model(args: argparse.Namespace) -> int:
    from app.embeddings.dense import written_optimized
    from app.embeddings.model_files import exported, onnx_path, query_graph_beside

    model_dir = args.model_dir or Settings().model_dir
    target = onnx_path(model_dir)
    if exported(model_dir) and not args.force:
        query_graph = query_graph_beside(target)
        if query_graph.is_file() and written_optimized(query_graph):
            print(f"ONNX model already exported: {target}")
            return 0
        return _add_query_graph(target)
    from app.embeddings.export import export_onnx

    started = time.perf_counter()
    export_onnx(target)
    print(f"exported the ONNX model to {target} in {time.perf_counter() - started:.1f} s")
    return 0


def _add_query_graph(graph: Path) -> int:
    """An export of an earlier release: the int8 query graph is missing, or was written before
    it was written optimized (no torch needed)."""
    from app.embeddings.quantize import quantize_for_queries

    started = time.perf_counter()
    written = quantize_for_queries(graph)
    print(f"wrote the int8 query graph {written} in {time.perf_counter() - started:.1f} s")
    return 0
