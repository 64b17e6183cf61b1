"""`astrolabe-search reindex`: every chunk of an index written with other settings embedded
again from its stored text (dense and BM25), re-chunked where the chunk size changed, payloads
and placeholders kept; a run killed mid-way resumes where it stopped; the new settings are
recorded only at the end."""

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from qdrant_client.http import models

from app import cli
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.index_settings import IndexSettings
from app.ingest.chunking import chunk_spans
from app.ingest.documents import Document
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.ingest.reindex import CHECKPOINT, reindex
from app.ingest.sparse_fit import read_fit
from app.store import fields
from app.store.edge import EdgeStore
from app.store.errors import IndexOutdated
from app.store.layout import IndexLayout
from tests.helpers import doc

DOCUMENTS = 24
OLD_MODEL = "old-model"


class OldEncoder(HashingEncoder):
    """Another model: the hashing vectors of the text read backwards."""

    name = OLD_MODEL

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return super().encode([text[::-1] for text in texts])


def content(n: int) -> str:
    return " ".join(
        f"Sentence {k} of note {n} tells of item{k % 9} here." for k in range(2 + n * 3)
    )


def written_with(data: Path, chunk_words: int = 180, **settings: Any) -> None:
    """An index as an older release wrote it: another model (and whatever `settings` say)."""
    store = EdgeStore(data, "astrolabe")
    indexer = Indexer(store, OldEncoder(), Bm25Encoder(), chunk_words=chunk_words)
    indexer.index(
        indexer.accept(validate_batch([doc(str(n), content(n)) for n in range(DOCUMENTS)]))
    )
    indexer.accept(validate_batch([doc("waiting", "Accepted, not yet indexed.")]))
    store.close()
    layout = IndexLayout.of(data, "astrolabe")
    old = IndexSettings.current().to_record() | {"model": OLD_MODEL, "chunk_words": chunk_words}
    layout.write_record({"settings": old | settings})


def points(data: Path) -> list[models.PointStruct]:
    store = EdgeStore(data, "astrolabe", facet_index=False, check_settings=False)
    try:
        found, _ = store.scroll_points(None, 10_000)
    finally:
        store.close()
    return found


def fitted_avg_len(data: Path) -> float:
    """The mean chunk length the index's BM25 vectors are encoded with."""
    store = EdgeStore(data, "astrolabe", facet_index=False, check_settings=False)
    try:
        fit = read_fit(store)
    finally:
        store.close()
    assert fit is not None
    return fit.avg_len


def assert_embedded_anew(data: Path) -> list[models.PointStruct]:
    """Every chunk carries this release's vectors of its stored text; the placeholder stays."""
    found = points(data)
    chunks = [p for p in found if (p.payload or {})[fields.KIND] == fields.KIND_CHUNK]
    texts = [f"{p.payload[fields.TITLE]}\n{p.payload[fields.TEXT]}" for p in chunks if p.payload]
    dense = HashingEncoder().encode(texts)
    sparse = Bm25Encoder(fitted_avg_len(data)).encode_documents(texts)
    for point, vector, terms in zip(chunks, dense, sparse, strict=True):
        assert isinstance(point.vector, dict)
        assert point.vector[fields.DENSE_VECTOR] == pytest.approx(vector, abs=1e-6)
        stored = point.vector[fields.SPARSE_VECTOR]
        assert isinstance(stored, models.SparseVector)
        assert dict(zip(stored.indices, stored.values, strict=True)) == pytest.approx(
            dict(zip(terms.indices, terms.values, strict=True))
        )
    assert [p for p in found if (p.payload or {})[fields.KIND] == fields.KIND_PENDING]
    assert json.loads((data / "astrolabe" / "index.json").read_text())["settings"] == (
        IndexSettings.current().to_record()
    )
    assert not (data / "astrolabe" / CHECKPOINT).exists()
    return chunks


def test_reindex_embeds_every_chunk_anew_and_records_the_settings(tmp_path: Path) -> None:
    written_with(tmp_path, bm25=IndexSettings.current().bm25 | {"avg_len": 42.0})
    before = {str(p.id): p.payload for p in points(tmp_path)}
    with pytest.raises(IndexOutdated):
        EdgeStore(tmp_path, "astrolabe")
    done = reindex(tmp_path, "astrolabe", HashingEncoder(), page=8)
    assert done is not None
    assert (done.documents, done.resumed_at) == (DOCUMENTS, 0)
    assert done.changed == ["model", "bm25.avg_len"]
    chunks = assert_embedded_anew(tmp_path)
    assert {str(p.id): p.payload for p in points(tmp_path)} == before  # payloads as they were
    assert done.chunks == len(chunks)
    EdgeStore(tmp_path, "astrolabe").close()  # opens as it is now
    assert reindex(tmp_path, "astrolabe", HashingEncoder()) is None


def test_a_changed_chunk_size_rechunks_each_document(tmp_path: Path) -> None:
    written_with(tmp_path, chunk_words=40)
    done = reindex(tmp_path, "astrolabe", HashingEncoder(), page=5)
    assert done is not None and "chunk_words" in done.changed
    chunks = assert_embedded_anew(tmp_path)
    by_doc: dict[str, list[dict[str, Any]]] = {}
    for point in chunks:
        assert point.payload is not None
        by_doc.setdefault(point.payload[fields.DOC_ID], []).append(point.payload)
    assert len(by_doc) == DOCUMENTS
    for doc_id, payloads in by_doc.items():
        text = content(int(doc_id))
        spans = chunk_spans(text)
        payloads.sort(key=lambda p: p[fields.CHUNK_INDEX])
        assert [p[fields.TEXT] for p in payloads] == [s.text for s in spans]
        assert all(
            p[fields.TEXT] == text[p[fields.CHUNK_START] : p[fields.CHUNK_END]] for p in payloads
        )
        assert {p[fields.TOTAL_CHUNKS] for p in payloads} == {len(spans)}
    assert (
        done.chunks == len(chunks) < sum(len(chunk_spans(content(n), 40)) for n in range(DOCUMENTS))
    )


def test_a_run_killed_mid_way_resumes_where_it_stopped(tmp_path: Path) -> None:
    written_with(tmp_path)
    script = (
        "import sys; from pathlib import Path; from app.ingest.reindex import reindex;"
        " from app.embeddings.dense import HashingEncoder;"
        " reindex(Path(sys.argv[1]), 'astrolabe', HashingEncoder(), page=8)"
    )
    killed = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        env=os.environ | {"ASTROLABE_FAILPOINT": "reindexed_page"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -9, killed.stderr
    checkpoint = json.loads((tmp_path / "astrolabe" / CHECKPOINT).read_text())
    assert 0 < checkpoint["documents"] < DOCUMENTS
    with pytest.raises(IndexOutdated):  # the service still refuses the half-done index
        EdgeStore(tmp_path, "astrolabe")
    done = reindex(tmp_path, "astrolabe", HashingEncoder(), page=8)
    assert done is not None
    assert done.resumed_at == checkpoint["documents"]
    assert done.documents == DOCUMENTS - done.resumed_at
    assert_embedded_anew(tmp_path)


def test_the_command_says_when_there_is_nothing_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    EdgeStore(tmp_path, "astrolabe").close()
    monkeypatch.setenv("SEARCH_DATA_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as done:
        cli.main(["reindex"])
    assert done.value.code == 0
    assert "nothing to do" in capsys.readouterr().out


def test_a_forced_reindex_normalises_text_stored_before_the_normalisation(tmp_path: Path) -> None:
    """An index of a release that stored ligatures and line-end hyphens as written: `reindex
    --force` re-chunks those documents from their normalised text, keeping their pages."""
    pages = ["The de\ufb01nitive guide was cre-\nated here.", "A second page, o\ufb03cially."]
    text = "\n\n".join(pages)
    old = Document("file", "manual", "the \ufb01le", text, "alice", 1, "/m.pdf", (), None,
                   "application/pdf", (), page_starts=(0, len(pages[0]) + 2))  # fmt: skip
    plain = validate_batch([doc("plain", "nothing to change here")])[0]
    store = EdgeStore(tmp_path, "astrolabe")
    indexer = Indexer(store, HashingEncoder(), Bm25Encoder())
    indexer.index(indexer.accept([old, plain]))  # accepted as an older release did: as written
    store.close()
    before = first_chunks(tmp_path)
    done = reindex(tmp_path, "astrolabe", HashingEncoder(), force=True)
    assert done is not None and done.documents == 2
    after = first_chunks(tmp_path)
    manual = after["manual"]
    assert manual[fields.TEXT] == (
        "The definitive guide was created here.\n\nA second page, officially."
    )
    assert manual[fields.TITLE] == "the file"
    assert (manual[fields.PAGE_NUMBER], manual[fields.PAGE_END]) == (1, 2)
    assert manual[fields.PAGE_BREAKS] == [manual[fields.TEXT].index("A second")]
    assert after["plain"][fields.TEXT] == before["plain"][fields.TEXT]


def first_chunks(data: Path) -> dict[str, dict[str, Any]]:
    """The payload of each document's first chunk, by doc_id."""
    payloads = [p.payload or {} for p in points(data)]
    return {
        p[fields.DOC_ID]: p
        for p in payloads
        if p.get(fields.KIND) == fields.KIND_CHUNK and p.get(fields.CHUNK_INDEX) == 0
    }
