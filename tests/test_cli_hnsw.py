"""The offline bulk paths build the HNSW index past SEARCH_HNSW_THRESHOLD chunks outside it
(and only then), and `serve` names the command when too many are outside it."""

from pathlib import Path

import numpy as np
import pytest

from app.cli import main, unindexed_warning
from app.store.edge import EdgeStore
from app.store.server import ServerStore
from tests.store.test_hnsw import _points, _vectors


def _ingest(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    threshold: int,
    *flags: str,
) -> str:
    files = tmp_path / "files"
    files.mkdir()
    for n in range(3):
        (files / f"note{n}.txt").write_text(f"Note {n} about comets and the orbit of planet {n}.")
    monkeypatch.setenv("SEARCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SEARCH_HNSW_THRESHOLD", str(threshold))
    with pytest.raises(SystemExit) as done:
        main(["ingest", str(files), *flags])
    assert done.value.code == 0
    output: str = capsys.readouterr().out
    assert "indexed 3 documents, 3 chunks" in output
    return output


@pytest.mark.parametrize(
    ("threshold", "flags", "optimized"),
    [(3, (), True), (4, (), False), (1, ("--no-optimize",), False)],
)
def test_ingest_optimizes_from_the_threshold_on_unless_told_not_to(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    threshold: int,
    flags: tuple[str, ...],
    optimized: bool,
) -> None:
    output = _ingest(tmp_path, monkeypatch, capsys, threshold, *flags)
    assert ("3 chunks are outside the HNSW index" in output) is optimized
    assert ("optimized in" in output) is optimized


def test_serve_warns_past_the_threshold_and_names_the_command(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path, "c")
    try:
        assert unindexed_warning(store, 1) is None  # empty
        store.upsert(_points(range(5), _vectors(np.random.default_rng(0), 5)))
        assert unindexed_warning(store, 6) is None
        warning = unindexed_warning(store, 5)
        assert warning is not None
        assert "5 of 5 chunks are not in an HNSW index" in warning
        assert "astrolabe-search optimize" in warning
    finally:
        store.close()


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect")
def test_a_qdrant_server_is_never_optimized_by_the_service() -> None:
    store = ServerStore(":memory:", None, "c")
    try:
        assert store.vector_index() is None
        assert unindexed_warning(store, 0) is None
    finally:
        store.close()
