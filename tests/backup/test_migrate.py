"""Migration from Qdrant Edge into qdrant-client's local mode: everything arrives (vectors as they
were, payloads, placeholders), an interrupted copy resumes where it stopped, counts are verified."""

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from qdrant_client.http import models

from app import cli
from app.backup.migrate import Checkpoint, MigrationMismatch, copy_points, count_points, verify
from app.embeddings.dense import HashingEncoder
from app.embeddings.sparse import Bm25Encoder
from app.ingest.models import validate_batch
from app.ingest.pipeline import Indexer
from app.store.base import Query
from app.store.edge import EdgeStore
from app.store.fields import SPARSE_VECTOR
from app.store.server import ServerStore
from tests.helpers import doc

# qdrant-client's local mode warns that it ignores payload indexes (they only speed things up).
pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")
INDEXED = 30
PENDING = 4


def _fill(store: EdgeStore) -> None:
    indexer = Indexer(store, HashingEncoder(), Bm25Encoder(), chunk_words=20)
    words = " ".join(f"word{i} topic{i % 7}" for i in range(40))
    documents = [doc(str(i), f"{words} document {i} " * (1 + i % 3)) for i in range(INDEXED)]
    indexer.index(indexer.accept(validate_batch(documents)))
    indexer.accept(validate_batch([doc(f"p{i}", "not embedded yet") for i in range(PENDING)]))


@pytest.fixture
def source(tmp_path: Path) -> Iterator[EdgeStore]:
    store = EdgeStore(tmp_path / "data", "astrolabe")
    _fill(store)
    yield store
    store.close()


@pytest.fixture
def target() -> Iterator[ServerStore]:
    store = ServerStore(":memory:", None, "astrolabe")
    yield store
    store.close()


def _sparse_scores(store: EdgeStore | ServerStore, text: str) -> dict[str, float]:
    """Every point the BM25 leg finds, with its score: equal only if the sparse vectors are."""
    query = models.NearestQuery(nearest=Bm25Encoder().encode_query(text))
    hits = store.query(Query(query=query, using=SPARSE_VECTOR, limit=1000))
    return {h.id: round(h.score, 4) for h in hits}


def test_everything_arrives_unchanged(
    source: EdgeStore, target: ServerStore, tmp_path: Path
) -> None:
    counts = count_points(source)
    assert counts.chunks > INDEXED and counts.pending == PENDING  # the corpus really varies
    checkpoint = Checkpoint(tmp_path / "checkpoint.json", "memory")
    copied = copy_points(source, target, checkpoint, batch_size=16)
    assert copied == counts.points
    assert verify(source, target) == counts
    ids = [str(p.id) for p in source.scroll_points(None, 1000)[0]]
    assert {h.id: h.payload for h in target.retrieve(ids)} == {
        h.id: h.payload for h in source.retrieve(ids)
    }
    chunk_ids = [h.id for h in source.scroll(count_filter("chunk"), 1000)]
    for id_, vector in source.dense_vectors(chunk_ids).items():
        assert target.dense_vectors([id_])[id_] == pytest.approx(vector, abs=1e-6)
    for text in ("word3 topic3 document 7", "topic5", "document 12 word1"):
        scores = _sparse_scores(source, text)
        assert len(scores) > 10 and _sparse_scores(target, text) == scores


def count_filter(kind: str) -> models.Filter:
    return models.Filter(
        must=[models.FieldCondition(key="kind", match=models.MatchValue(value=kind))]
    )


class FailingTarget:
    """A target that dies after `pages` successful writes."""

    def __init__(self, inner: ServerStore, pages: int) -> None:
        self.inner = inner
        self.pages = pages

    def upsert(self, points: Sequence[models.PointStruct]) -> None:
        if self.pages == 0:
            raise ConnectionError("the server went away")
        self.pages -= 1
        self.inner.upsert(points)


def test_an_interrupted_copy_resumes_where_it_stopped(
    source: EdgeStore, target: ServerStore, tmp_path: Path
) -> None:
    checkpoint = Checkpoint(tmp_path / "checkpoint.json", "memory")
    with pytest.raises(ConnectionError):
        copy_points(source, FailingTarget(target, pages=3), checkpoint, batch_size=16)  # type: ignore[arg-type]
    offset, copied = checkpoint.load()
    assert offset is not None and copied == 3 * 16
    total = count_points(source).points
    assert copy_points(source, target, checkpoint, batch_size=16) == total - 3 * 16
    assert verify(source, target) == count_points(source)


def test_a_checkpoint_for_another_target_is_ignored(tmp_path: Path) -> None:
    Checkpoint(tmp_path / "c.json", "http://a:6333#x").save("some-id", 10)
    assert Checkpoint(tmp_path / "c.json", "http://b:6333#x").load() == (None, 0)
    assert Checkpoint(tmp_path / "c.json", "http://a:6333#x").load() == ("some-id", 10)


def test_a_target_that_was_not_empty_fails_verification(
    source: EdgeStore, target: ServerStore, tmp_path: Path
) -> None:
    target.upsert([models.PointStruct(id=1, vector={}, payload={"kind": "chunk"})])
    copy_points(source, target, Checkpoint(tmp_path / "c.json", "memory"))
    with pytest.raises(MigrationMismatch, match="counts differ"):
        verify(source, target)


def test_the_command_copies_and_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = EdgeStore(tmp_path / "data", "astrolabe")
    _fill(store)
    expected = count_points(store)
    store.close()
    monkeypatch.setenv("SEARCH_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(SystemExit) as done:
        cli.main(["migrate", "--to", ":memory:", "--collection", "moved", "--batch-size", "8"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    summary = f"copied {expected.points} points ({expected.chunks} chunks, {PENDING} placeholders)"
    assert summary in out and "counts verified" in out
    assert not (tmp_path / "data" / "astrolabe.migrate.json").exists()
