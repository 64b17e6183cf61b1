"""An OpenAI-compatible embedding server for the live benchmark (`POST /v1/embeddings`, the API
app/embeddings/remote.py speaks), in a process of its own:

    .venv/bin/python -m bench.harness.embed_stub --table bench/.data/tiers/100k/dense [--hashing]

A text whose vector the bench already has (a table: `<name>.keys`, the SHA-1 of each text as
bench/harness/encoder.py keys it, one a line, beside `<name>.f32`, one row each: a tier's
`dense.f32`) is answered from the table, so loading a tier over HTTP costs the service what it costs
without the model. Any other text (queries, the service's start-up probe) goes through the real
ONNX MiniLM at its real cost; with `--hashing` (the smoke tier), through the hashing encoder,
the probe sentence answered with the local model's shipped vector. Prints `{"port": n}` once
it listens; `GET /stats` counts the texts answered from the tables and by the model."""

import argparse
import json
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from app.embeddings.dense import DenseEncoder, HashingEncoder
from app.embeddings.remote import PROBE_SENTENCE, reference_probe_vector
from app.index_settings import DIMENSION
from bench.harness.encoder import text_key
from bench.harness.loopback import JsonHandler


class Tables:
    """Vectors by text key, over memory-mapped tables."""

    def __init__(self, names: Sequence[Path]) -> None:
        self._rows: dict[str, tuple[int, int]] = {}
        self._vectors: list[np.ndarray] = []
        for n, name in enumerate(names):
            vectors = np.memmap(name.with_suffix(".f32"), dtype=np.float32, mode="r")
            self._vectors.append(vectors.reshape(-1, DIMENSION))
            keys = name.with_suffix(".keys").read_text().split()
            self._rows.update((key, (n, row)) for row, key in enumerate(keys))

    def get(self, text: str) -> np.ndarray | None:
        found = self._rows.get(text_key(text))
        return None if found is None else self._vectors[found[0]][found[1]]


class ProbeAware:
    """The hashing encoder, except for the probe sentence, answered with the local model's
    vector: the service's start-up check passes without loading the model (smoke runs only)."""

    name = "hashing-test-encoder"
    dimension = DIMENSION

    def __init__(self) -> None:
        self._hashing = HashingEncoder()
        self._probe = reference_probe_vector()

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._probe if t == PROBE_SENTENCE else self._hashing.encode([t])[0] for t in texts]


class Embedder:
    def __init__(self, tables: Tables, model: DenseEncoder) -> None:
        self.tables = tables
        self.model = model
        self.counts = {"table": 0, "model": 0}
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> list[list[float]]:
        found = [self.tables.get(t) for t in texts]
        missing = [t for t, v in zip(texts, found, strict=True) if v is None]
        computed = iter(self.model.encode(missing) if missing else [])
        with self._lock:
            self.counts["table"] += len(texts) - len(missing)
            self.counts["model"] += len(missing)
        return [
            next(computed) if v is None else np.round(v.astype(np.float64), 7).tolist()
            for v in found
        ]


def handler(embedder: Embedder) -> type[JsonHandler]:
    class Handler(JsonHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real embedding server
        disable_nagle_algorithm = True  # else headers and body wait on a delayed ACK (40 ms)

        def do_GET(self) -> None:
            if self.path != "/stats":
                self.send_json(404, b"{}")
                return
            self.send_json(200, json.dumps(embedder.counts).encode())

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = [body["input"]] if isinstance(body["input"], str) else list(body["input"])
            data = [
                {"object": "embedding", "index": i, "embedding": vector}
                for i, vector in enumerate(embedder.embed(texts))
            ]
            answer = {"object": "list", "model": body.get("model"), "data": data}
            self.send_json(200, json.dumps(answer).encode())

    return Handler


def main(argv: list[str] | None = None) -> None:
    from http.server import ThreadingHTTPServer

    parser = argparse.ArgumentParser(prog="python -m bench.harness.embed_stub")
    parser.add_argument("--table", type=Path, action="append", default=[])
    parser.add_argument("--hashing", action="store_true", help="smoke runs: no model")
    args = parser.parse_args(argv)
    model: Any
    if args.hashing:
        model = ProbeAware()
    else:
        from app.embeddings.dense import MiniLMEncoder

        model = MiniLMEncoder()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(Embedder(Tables(args.table), model)))
    server.daemon_threads = True
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    server.serve_forever()


@dataclass
class Stub:
    url: str  # what SEARCH_EMBEDDING_URL names
    process: subprocess.Popen[str]

    def stats(self) -> dict[str, int]:
        counts: dict[str, int] = httpx.get(f"{self.url.removesuffix('/v1')}/stats").json()
        return counts


@contextmanager
def embed_stub(tables: list[Path], hashing: bool) -> Iterator[Stub]:
    command = [sys.executable, "-m", "bench.harness.embed_stub"]
    command += [f"--table={t}" for t in tables] + (["--hashing"] if hashing else [])
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"the embedding stub exited with {process.wait()}")
        yield Stub(f"http://127.0.0.1:{json.loads(line)['port']}/v1", process)
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


if __name__ == "__main__":
    main()
