"""The offline bulk paths build the HNSW index past SEARCH_HNSW_THRESHOLD chunks outside it
(and only then); `serve` rebuilds it by itself (tests/store/engine/test_supervisor.py)."""

from pathlib import Path

import pytest

from app.cli import main
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
