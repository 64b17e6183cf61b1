"""The split between the model's two graphs: searches embed their texts on the int8 graph,
documents on the float one; a model directory exported by an earlier release (no int8 graph)
still serves, on the float graph, and `export-model` adds the int8 graph to it."""

import logging
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.embeddings import dense
from app.embeddings.dense import MiniLMEncoder, OnnxGraph, written_optimized
from app.embeddings.model_files import onnx_path, query_graph_beside, tokenizer_beside
from tests.helpers import doc, ids, index, running_app, search

MISSING = "int8 query graph is missing"


class CountingSession:
    def __init__(self, session: Any) -> None:
        self._session = session
        self.runs = 0

    def run(self, outputs: Any, feeds: Any) -> Any:
        self.runs += 1
        return self._session.run(outputs, feeds)


def _count_runs(monkeypatch: pytest.MonkeyPatch, graph: OnnxGraph) -> CountingSession:
    counting = CountingSession(graph.session)
    monkeypatch.setattr(graph, "session", counting)
    return counting


@pytest.fixture
def older_export(tmp_path: Path) -> Path:
    """A model directory as an earlier release exported it: the float graph and its tokenizer."""
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    for file in (onnx_path(), tokenizer_beside(onnx_path())):
        (model_dir / file.name).symlink_to(file)
    return model_dir


def test_searches_embed_on_the_int8_graph_and_documents_on_the_float_one(
    tmp_path: Path, minilm: MiniLMEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert minilm.queries.graph.path == query_graph_beside(minilm.graph.path)
    floats = _count_runs(monkeypatch, minilm.graph)
    int8 = _count_runs(monkeypatch, minilm.queries.graph)
    with running_app(tmp_path / "data", minilm) as client:
        assert (floats.runs, int8.runs) == (0, 1)  # the warm-up's search, before it is ready
        index(client, doc("seed", "Tomato seedlings want warm soil in spring."))
        assert (floats.runs, int8.runs) == (1, 1)
        for algorithm in ("semantic", "hybrid"):
            found = search(client, query=f"growing tomatoes ({algorithm})", algorithm=algorithm)
            assert ids(found) == ["seed"]
        assert (floats.runs, int8.runs) == (1, 3)


def test_a_model_dir_without_the_int8_graph_serves_on_the_float_graph(
    older_export: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="app.embeddings.dense"):
        encoder = MiniLMEncoder(older_export)
        MiniLMEncoder(older_export)
    assert encoder.queries.graph is encoder.graph
    assert sum(MISSING in r.getMessage() for r in caplog.records) == 1, "said once"
    with running_app(tmp_path / "data", encoder) as client:
        index(client, doc("seed", "Tomato seedlings want warm soil in spring."))
        assert ids(search(client, query="growing tomatoes", algorithm="semantic")) == ["seed"]


def test_export_model_adds_only_the_int8_graph_to_an_earlier_export(
    older_export: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    float_graph = older_export / onnx_path().name
    with pytest.raises(SystemExit) as exit_code:
        main(["export-model", "--model-dir", str(older_export)])
    assert exit_code.value.code == 0
    assert "int8 query graph" in capsys.readouterr().out
    assert float_graph.is_symlink(), "the float graph was exported again"
    written = query_graph_beside(float_graph)
    assert written.stat().st_mode & 0o444 == 0o444, "the service may run as another user"
    assert not [p.name for p in older_export.iterdir() if p.name.endswith(".tmp")]
    assert MiniLMEncoder(older_export).queries.graph.path == written


def test_export_model_rewrites_an_int8_graph_written_unoptimized_and_serve_opens_it_as_it_is(
    older_export: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An earlier release wrote the int8 graph as quantized: ONNX Runtime optimized it at each
    start. `export-model` writes it optimized (the same vectors, bit for bit), and the query
    graph opens it without optimizing it again; the earlier one is still served, optimized."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    float_graph = older_export / onnx_path().name
    written = query_graph_beside(float_graph)
    quantize_dynamic(float_graph, written, weight_type=QuantType.QInt8)
    tokenizer = MiniLMEncoder(older_export)._tokenizer
    opened: list[bool] = []
    real_session = dense._session

    def session(path: Path, optimize: bool) -> Any:
        opened.append(optimize)
        return real_session(path, optimize)

    monkeypatch.setattr(dense, "_session", session)
    texts = ["growing tomatoes", "warm soil in spring for the seedlings"]
    earlier = OnnxGraph(written, tokenizer, optimized=True).run(texts)
    assert opened == [False, True], "an unmarked graph is optimized when opened"
    assert not written_optimized(written)

    with pytest.raises(SystemExit) as exit_code:
        main(["export-model", "--model-dir", str(older_export)])
    assert exit_code.value.code == 0
    assert written_optimized(written)
    opened.clear()
    rewritten = OnnxGraph(written, tokenizer, optimized=True).run(texts)
    assert opened == [False], "opened once, as it is"
    assert (rewritten == earlier).all()


def test_searches_open_only_the_int8_session_and_documents_the_float_one() -> None:
    """`serve` opens the search session before `/readyz`; the float one waits for a document."""
    encoder = MiniLMEncoder()
    encoder.queries.encode(["growing tomatoes"])
    assert "graph" not in vars(encoder), "a search opened the documents' float session"
    encoder.encode(["Tomato seedlings want warm soil in spring."])
    assert "graph" in vars(encoder)
