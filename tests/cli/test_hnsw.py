"""The offline bulk paths build the HNSW index past SEARCH_HNSW_THRESHOLD chunks outside it
(and only then); `serve` rebuilds it by itself (tests/store/engine/test_supervisor.py)."""

from pathlib import Path

import pytest

from app.cli import main
from app.store import segments
from app.store.server import ServerStore


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


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect")
def test_a_qdrant_server_is_never_optimized_by_the_service() -> None:
    store = ServerStore(":memory:", None, "c")
    try:
        assert store.vector_index() is None
    finally:
        store.close()


@pytest.mark.parametrize(
    ("segment_chunks", "flags", "built"),
    [(2, (), True), (500_000, (), False), (2, ("--no-optimize",), False)],
)
def test_ingest_builds_a_segments_graph_once_it_is_full(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    segment_chunks: int,
    flags: tuple[str, ...],
    built: bool,
) -> None:
    """During the load, not only at its end (app/store/segments.py; what the graph holds then:
    tests/store/test_segments.py)."""
    monkeypatch.setattr(segments, "SEGMENT_CHUNKS", segment_chunks)
    output = _ingest(tmp_path, monkeypatch, capsys, 1_000, *flags)
    assert ("a segment is full" in output) is built
