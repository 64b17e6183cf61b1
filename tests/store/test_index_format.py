"""`index.json` records what the stored data was written with; an index written before that was
recorded was written with 0.1.0's settings, and one written with other settings (0.1.0's BM25
too), or by a newer release, is refused in one line naming the command to run, with
nothing changed."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import exits
from app.embeddings.dense import HashingEncoder
from app.index_settings import RELEASE_0_1_0, IndexSettings, bm25_changes, changes
from app.ingest.reindex import reindex
from app.store.edge import EdgeStore
from app.store.errors import IndexOutdated
from app.store.layout import INDEX_FILE, IndexLayout
from tests.store.test_layout import legacy_shard, point


def index_with(tmp_path: Path, **record: object) -> Path:
    """An index of one point whose index.json then holds `record` in place of its own."""
    store = EdgeStore(tmp_path, "c")
    store.upsert([point(1)])
    store.close()
    path = tmp_path / "c" / INDEX_FILE
    path.write_text(json.dumps({"format": 2, "shard": "shard-000001"} | record))
    return path


def other(**fields: object) -> dict[str, object]:
    return IndexSettings.current().to_record() | fields


def test_this_release_differs_from_0_1_0_only_in_bm25_b() -> None:
    """BM25's b went from 0.75 to 0.4 (fitted to the corpus): an index of 0.1.0 needs its
    sparse vectors re-encoded, nothing more. Another change here needs RELEASE_0_1_0 kept as it
    was and the reindex it implies documented in deployment.md's Upgrading."""
    assert changes(RELEASE_0_1_0, IndexSettings.current()) == ["bm25.b"]


def test_an_index_without_settings_is_0_1_0s_and_reindex_records_them(tmp_path: Path) -> None:
    path = index_with(tmp_path)
    before = path.read_bytes()
    with pytest.raises(IndexOutdated, match=r"\(bm25\.b\).*`astrolabe-search reindex`"):
        EdgeStore(tmp_path, "c")
    assert path.read_bytes() == before
    done = reindex(tmp_path, "c", HashingEncoder())
    assert done is not None and done.sparse_only and done.changed == ["bm25.b"]
    EdgeStore(tmp_path, "c").close()
    assert json.loads(path.read_text()) == {
        "format": 2,
        "shard": "shard-000001",
        "settings": IndexSettings.current().to_record(),
    }


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        (other(model="sentence-transformers/all-mpnet-base-v2"), "model"),
        (other(dimension=768), "dimension"),
        (other(chunk_words=120), "chunk_words"),
        (other(bm25=IndexSettings.current().bm25 | {"k": 1.5}), "bm25.k"),
        (other(bm25=IndexSettings.current().bm25 | {"language": "german"}), "bm25.language"),
    ],
)
def test_other_settings_are_refused_naming_reindex(
    tmp_path: Path, settings: dict[str, object], named: str
) -> None:
    path = index_with(tmp_path, settings=settings)
    before = path.read_bytes()
    with pytest.raises(IndexOutdated) as refused:
        EdgeStore(tmp_path, "c")
    assert f"({named})" in refused.value.message
    assert "`astrolabe-search reindex`" in refused.value.message
    assert "\n" not in refused.value.message
    assert path.read_bytes() == before
    as_it_is = EdgeStore(tmp_path, "c", check_settings=False)  # backup and reindex open it
    assert as_it_is.count() == 1
    as_it_is.close()
    assert path.read_bytes() == before


def test_a_newer_format_is_refused(tmp_path: Path) -> None:
    path = index_with(tmp_path, format=3)
    with pytest.raises(IndexOutdated, match="newer release"):
        EdgeStore(tmp_path, "c", check_settings=False)
    assert json.loads(path.read_text())["format"] == 3


def test_a_format_1_index_with_other_settings_is_refused_before_it_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    legacy_shard(tmp_path / "c", 3)
    later = IndexSettings(RELEASE_0_1_0.model, 384, RELEASE_0_1_0.bm25, 200)
    monkeypatch.setattr(IndexSettings, "current", classmethod(lambda cls: later))
    with pytest.raises(IndexOutdated, match=r"\(chunk_words\)"):
        EdgeStore(tmp_path, "c")
    assert (tmp_path / "c" / "edge_config.json").exists()  # still format 1, where it was
    assert not (tmp_path / "c" / INDEX_FILE).exists()


def test_bm25_changes_names_each_parameter() -> None:
    assert bm25_changes({"k": 1.2, "b": 0.75}, {"k": 1.5, "b": 0.75, "avg_len": 40}) == [
        "bm25.avg_len",
        "bm25.k",
    ]


def test_serve_refuses_an_outdated_index_in_one_line(tmp_path: Path) -> None:
    index_with(tmp_path / "data", settings=other(chunk_words=99))
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"k": {"sub": "a", "scope": "search"}}))
    env = os.environ | {
        "SEARCH_DATA_DIR": str(tmp_path / "data"),
        "SEARCH_COLLECTION": "c",
        "SEARCH_API_KEYS_FILE": str(keys),
    }
    done = subprocess.run(
        [sys.executable, "-m", "app", "serve", "--port", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == exits.EXIT_INDEX_OUTDATED, done.stderr
    lines = [line for line in done.stderr.splitlines() if "astrolabe-search reindex" in line]
    assert len(lines) == 1 and "(chunk_words)" in lines[0], done.stderr


def test_a_handover_keeps_the_settings(tmp_path: Path) -> None:
    index_with(tmp_path, settings=IndexSettings.current().to_record())
    layout = IndexLayout.of(tmp_path, "c")
    layout.switch_to(layout.generation(2))
    assert layout.record()["shard"] == "shard-000002"
    assert layout.record()["settings"] == IndexSettings.current().to_record()


def test_a_record_that_is_not_settings_is_refused() -> None:
    with pytest.raises(ValueError, match="KeyError"):
        IndexSettings.from_record({"model": "m"})
