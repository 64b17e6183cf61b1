"""`astrolabe-search reindex-sparse` (and the same step in `optimize`): re-fits BM25 from the
stored text when the mean drifted, says what it did, and then keeps its hands off."""

from pathlib import Path

import pytest

from app.cli import main
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.ingest.sparse_fit import read_fit
from app.store.edge import EdgeStore
from tests.helpers import doc


def _run(*argv: str) -> int:
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    return int(done.value.code or 0)


def test_reindex_sparse_refits_a_drifted_index_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = EdgeStore(tmp_path, "c")
    indexer = Indexer(store, HashingEncoder(), Bm25Encoder(), chunk_words=60)
    indexer.index(indexer.accept(validate_batch([doc("a", "Short note.")])))
    long = " ".join(f"Paragraph {i} about the budget review and the plans." for i in range(20))
    indexer.index(indexer.accept(validate_batch([doc(f"l{i}", long) for i in range(3)])))
    first = read_fit(store)
    store.close()
    monkeypatch.setenv("SEARCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SEARCH_COLLECTION", "c")

    assert _run("reindex-sparse") == 0
    assert "BM25: re-encoded" in capsys.readouterr().out
    assert _run("reindex-sparse") == 0
    assert "sparse vectors kept" in capsys.readouterr().out
    assert _run("optimize") == 0
    printed = capsys.readouterr().out
    assert "sparse vectors kept" in printed and "optimized in" in printed

    store = EdgeStore(tmp_path, "c")
    fit = read_fit(store)
    store.close()
    assert first is not None and fit is not None and fit.avg_len > 1.25 * first.avg_len
