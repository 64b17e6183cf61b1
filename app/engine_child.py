"""The engine child's program, `python -m app.engine_child`: one shard server
(`app.store.engine.shard_server`) in a process of its own, started by the supervisor
(`app.store.engine.launch`). Parses its arguments, dies with its supervisor (PR_SET_PDEATHSIG,
even a kill -9 one: like a crash, which the write-ahead logs are for), logs where the service
logs, and listens on its Unix socket, a thread per connection.

Lines on stdout tell the supervisor where it stands: {"opened": shard}, {"ready": socket} or
{"error": class, "message": ...}."""

if __name__ == "__main__":  # qdrant-client's models without its clients, before any import
    from app.store.qdrant_models import import_models_only

    import_models_only()

import argparse
import ctypes
import gc
import json
import logging
import os
import signal
import sys
import threading
from multiprocessing.connection import Connection, Listener
from pathlib import Path
from typing import Any

from app.store.engine.launch import KEY_ENV, REBUILD_SEGMENTS
from app.store.engine.shard_server import ShardServer, open_shard_store
from app.store.engine.wire import Moved, failure_of, packed
from app.store.errors import StoreError
from app.store.layout import IndexLayout
from app.telemetry.logs import LOG_FORMATS, configure_logging

log = logging.getLogger("astrolabe.shard_server")
PR_SET_PDEATHSIG = 1
SIGNAL_CHECK_S = 0.5


def _serve_connection(server: ShardServer, connection: Connection) -> None:
    with connection:
        while True:
            try:
                call = connection.recv()
            except (EOFError, OSError):
                return
            try:
                reply = packed(server.answer(call))
            except Exception as exc:
                if not isinstance(exc, (Moved, StoreError)):
                    log.exception("%s failed", call.method)
                reply = failure_of(exc)
            try:
                connection.send(reply)
            except OSError:
                return


def _accept(server: ShardServer, listener: Listener) -> None:
    while not server.stopped.is_set():
        try:
            connection = listener.accept()
        except OSError:  # the listener closed, or a client that failed the handshake
            if server.stopped.is_set():
                return
            continue
        threading.Thread(
            target=_serve_connection, args=(server, connection), name="engine-call", daemon=True
        ).start()


def _report(**line: Any) -> None:
    print(json.dumps(line), flush=True)


def _die_with_parent(parent: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the supervisor died before the line above
        os._exit(1)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app.engine_child")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--min-free-bytes", type=int, required=True)
    parser.add_argument("--log-format", choices=LOG_FORMATS, required=True)
    parser.add_argument("--shard", type=Path, help="a rebuild's copy: optimize it, then replay")
    parser.add_argument(
        "--segments", type=int, default=REBUILD_SEGMENTS, help="a rebuild merges down to these"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    configure_logging(args.log_format)  # the lines go where the supervisor's go
    _die_with_parent(args.parent)
    key = bytes.fromhex(os.environ.pop(KEY_ENV))
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        store = open_shard_store(
            args.data_dir, args.collection, args.min_free_bytes, args.shard, args.segments
        )
    except StoreError as exc:
        _report(error=type(exc).__name__, message=exc.message)
        return 1
    _report(opened=str(store.path))
    server = ShardServer(store, stopped)
    server.prepare(None if args.shard is None else IndexLayout.journal(args.shard))
    gc.freeze()  # a full collection would walk every object of the start while searches wait
    listener = Listener(args.socket, "AF_UNIX", authkey=key)
    threading.Thread(target=_accept, args=(server, listener), daemon=True).start()
    _report(ready=args.socket)
    # Python runs a signal's handler in this thread, and only when it runs again: a SIGTERM
    # the kernel hands to another thread (the engine's, a connection's) would never stop a
    # wait without a timeout.
    while not server.stopped.wait(SIGNAL_CHECK_S):
        pass
    listener.close()
    server.close(release=False)
    logging.shutdown()
    os._exit(0)  # with the flushed shard open: its files stay in the page cache


if __name__ == "__main__":
    sys.exit(main())
