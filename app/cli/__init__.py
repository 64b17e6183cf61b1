"""`astrolabe-search serve | ingest | demo | optimize | reindex-sparse | migrate | backup |
restore | reindex | export-model | nextcloud login | nextcloud status`: the parser, and a store
that cannot be opened reported in one line with its exit code (`exits`). Each command's work is
in the module of its job: `serve`, `indexing`, `maintenance`, `nextcloud`."""

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from app.cli import indexing, maintenance, nextcloud, serving
from app.cli.exits import EXIT_FAILED, exit_code
from app.cli.maintenance import SERVICE_TOKEN_ENV, SERVICE_URL_ENV
from app.config import Settings
from app.telemetry.logs import configure_logging

NO_OPTIMIZE_HELP = (
    "do not build the HNSW index at the end, even past SEARCH_HNSW_THRESHOLD chunks outside it"
)


def main(argv: Sequence[str] | None = None) -> None:
    configure_logging(Settings().log_format)
    parser = argparse.ArgumentParser(prog="astrolabe-search")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--dev", action="store_true", help="print a one-time dev token")
    serve.set_defaults(run=serving.serve)
    ingest = commands.add_parser("ingest", help="index files and folders from disk")
    ingest.add_argument("paths", nargs="+")
    ingest.add_argument("--owner", default="dev", help="owner of the ingested documents")
    ingest.add_argument("--no-optimize", action="store_true", help=NO_OPTIMIZE_HELP)
    ingest.set_defaults(run=indexing.ingest)
    demo = commands.add_parser("demo", help="load the bundled demo corpus")
    demo.add_argument("--force", action="store_true", help="re-index even if already loaded")
    demo.add_argument("--no-optimize", action="store_true", help=NO_OPTIMIZE_HELP)
    demo.set_defaults(run=indexing.demo)
    migrate = commands.add_parser(
        "migrate", help="copy the embedded index to a Qdrant server (no re-embedding)"
    )
    migrate.add_argument("--to", required=True, metavar="URL", help="the Qdrant server")
    migrate.add_argument("--collection", help="target collection (default: SEARCH_COLLECTION)")
    migrate.add_argument("--api-key", help="the server's API key (default: SEARCH_QDRANT_API_KEY)")
    migrate.add_argument("--batch-size", type=int, default=256, help="points per write")
    migrate.set_defaults(run=maintenance.migrate)
    export = commands.add_parser(
        "export-model",
        help="export the shipped MiniLM weights to ONNX (needs the export extra: torch)",
    )
    export.add_argument("--model-dir", type=Path, help="default: SEARCH_MODEL_DIR or the venv")
    export.add_argument("--force", action="store_true", help="export again even if present")
    export.set_defaults(run=maintenance.export_model)
    optimize = commands.add_parser(
        "optimize",
        help="re-fit BM25 if drifted, build the HNSW index offline (stop `serve` first: it"
        " takes minutes)",
    )
    optimize.set_defaults(run=indexing.optimize)
    reindex_sparse = commands.add_parser(
        "reindex-sparse",
        help="re-encode the BM25 vectors from the stored text when the mean chunk length"
        " drifted past 25 % (no dense model run; resumes where an interrupted run stopped)",
    )
    reindex_sparse.add_argument(
        "--force", action="store_true", help="re-encode even within the bound"
    )
    reindex_sparse.set_defaults(run=indexing.reindex_sparse)
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
    backup.set_defaults(run=maintenance.backup)
    restore = commands.add_parser(
        "restore", help="restore a backup into an empty SEARCH_DATA_DIR (or empty collection)"
    )
    restore.add_argument("src", help="a directory `backup` wrote")
    restore.set_defaults(run=maintenance.restore)
    reindex = commands.add_parser(
        "reindex",
        help="re-embed the stored text with this release's settings (stop `serve` first;"
        " resumes where an interrupted run stopped)",
    )
    reindex.add_argument("--force", action="store_true", help="even if the settings match")
    reindex.set_defaults(run=maintenance.reindex)
    _add_nextcloud(commands)
    args = parser.parse_args(argv)
    sys.exit(_run(args))


def _add_nextcloud(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """`nextcloud login | status` (app.cli.nextcloud)."""
    about = "connect Nextcloud users to the connector, and show their sync"
    group = commands.add_parser("nextcloud", help=about, description=about)
    actions = group.add_subparsers(dest="action", required=True)
    about = (
        "connect a Nextcloud user (Login Flow v2): open the printed URL, log in as the user and"
        " grant access; the app password is checked and stored encrypted (needs"
        " SEARCH_SECRET_KEY), and a running `serve` starts syncing the user within 5 s"
    )
    login = actions.add_parser("login", help=about, description=about)
    login.add_argument(
        "--url",
        help="the Nextcloud base URL, e.g. https://cloud.example.org (default:"
        " SEARCH_NEXTCLOUD_URL)",
    )
    login.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=nextcloud.FLOW_SECONDS,
        metavar="SECONDS",
        help="give up when access is not granted within this long (default: %(default).0f,"
        " the life of a Nextcloud login flow)",
    )
    login.set_defaults(run=nextcloud.login, error=login.error)
    about = (
        "the connected users: state, files seen, indexed, skipped by reason, last sync, lag,"
        " last error (read from the ledger: works while `serve` runs)"
    )
    status = actions.add_parser("status", help=about, description=about)
    status.add_argument("--json", action="store_true", help="as JSON")
    status.set_defaults(run=nextcloud.status)


def _positive_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text!r}")
    return seconds


def _run(args: argparse.Namespace) -> int:
    """The command, with a store that cannot be opened reported in one line (docs/deployment.md
    lists the exit codes)."""
    from app.backup.errors import BackupError
    from app.store.errors import StoreError

    try:
        code: int = args.run(args)
    except StoreError as exc:
        print(f"astrolabe-search: {exc.message}", file=sys.stderr)
        return exit_code(exc)
    except BackupError as exc:
        print(f"astrolabe-search: {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    return code
