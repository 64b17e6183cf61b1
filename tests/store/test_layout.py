"""The data directory's generations: `index.json` names the one in use; a format-1 index (the
shard at the collection path) moves into generation 0 once it opened, and a move a crash cut
short is finished at the next open; the owner of the index deletes every other generation."""

import json
from pathlib import Path

import pytest
import qdrant_edge as qe
from qdrant_client.http import models

from app.index_settings import RELEASE_0_1_0, IndexSettings
from app.store.edge import EdgeStore
from app.store.layout import INDEX_FILE, IndexLayout
from app.store.shard import edge_config as _config


def point(n: int) -> models.PointStruct:
    return models.PointStruct(
        id=f"00000000-0000-0000-0000-{n:012d}",
        vector={"dense": [1.0] + [0.0] * 383},
        payload={"kind": "chunk", "n": n},
    )


def legacy_shard(root: Path, points: int) -> None:
    """An index as the previous release left it: the shard itself at the collection path."""
    shard = qe.EdgeShard.create(str(root), _config())
    shard.update(
        qe.UpdateOperation.upsert_points(
            [qe.Point(n, {"dense": [1.0] + [0.0] * 383}, {"kind": "chunk"}) for n in range(points)]
        )
    )
    shard.flush()
    shard.close()


def test_a_new_index_starts_at_generation_one(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path, "c")
    store.upsert([point(1)])
    store.close()
    layout = IndexLayout.of(tmp_path, "c")
    assert json.loads((tmp_path / "c" / INDEX_FILE).read_text()) == {
        "format": 2,
        "shard": "shard-000001",
        "merge_owed": False,
        "settings": IndexSettings.current().to_record(),
    }
    assert layout.current() == tmp_path / "c" / "shard-000001"
    reopened = EdgeStore(tmp_path, "c")
    assert reopened.count() == 1
    reopened.close()


@pytest.fixture
def settings_of_0_1_0(monkeypatch: pytest.MonkeyPatch) -> None:
    """The move as a release with 0.1.0's settings makes it (this one refuses 0.1.0's BM25
    first: `test_index_format`, `test_format1_fixture`)."""
    monkeypatch.setattr(IndexSettings, "current", classmethod(lambda cls: RELEASE_0_1_0))


@pytest.mark.usefixtures("settings_of_0_1_0")
def test_a_format_1_index_moves_into_generation_0_with_its_points(tmp_path: Path) -> None:
    legacy_shard(tmp_path / "c", 7)
    store = EdgeStore(tmp_path, "c")
    assert store.path == tmp_path / "c" / "shard-000000"
    assert store.count() == 7
    assert store.wait_for_facet_index(timeout=60)  # else no snapshot is left at close
    store.close()
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == [
        INDEX_FILE,
        "shard-000000",
        "shard-000000.facets.npz",
    ]


@pytest.mark.usefixtures("settings_of_0_1_0")
def test_a_move_cut_short_by_a_crash_is_finished_at_the_next_open(tmp_path: Path) -> None:
    legacy_shard(tmp_path / "c", 3)
    (tmp_path / "c").rename(tmp_path / "c.format1")  # the first step of the move, then a crash
    store = EdgeStore(tmp_path, "c")
    assert store.count() == 3
    store.close()
    assert not (tmp_path / "c.format1").exists()


def test_the_owner_deletes_every_other_generation_and_its_files(tmp_path: Path) -> None:
    first = EdgeStore(tmp_path, "c")
    assert first.wait_for_facet_index(timeout=60)
    first.close()
    root = tmp_path / "c"
    abandoned = root / "shard-000002"
    abandoned.mkdir()
    (abandoned / "segment").write_text("half a rebuild")
    for name in ("shard-000002.journal", "shard-000002.facets.npz", "shard-000001.journal"):
        (root / name).write_text("left by a crash")
    store = EdgeStore(tmp_path, "c")
    assert store.wait_for_facet_index(timeout=60)
    store.close()
    assert sorted(p.name for p in root.iterdir()) == [
        INDEX_FILE,
        "shard-000001",
        "shard-000001.facets.npz",
    ]


def test_index_json_names_the_generation_in_use(tmp_path: Path) -> None:
    EdgeStore(tmp_path, "c").close()
    layout = IndexLayout.of(tmp_path, "c")
    second = layout.next_generation()
    assert second.name == "shard-000002"
    second.mkdir()
    layout.switch_to(second)
    assert layout.current() == second
    assert not (tmp_path / "c" / (INDEX_FILE + ".partial")).exists()


def test_the_owner_removes_the_backup_copies_a_killed_service_left(tmp_path: Path) -> None:
    EdgeStore(tmp_path, "c").close()
    layout = IndexLayout.of(tmp_path, "c")
    left = layout.backup_staging()
    (left / "shard-000001").mkdir(parents=True)
    (left / "shard-000001" / "x").write_text("half a copy")
    assert left.name.startswith("backup-") and left.name.endswith(".partial")
    EdgeStore(tmp_path, "c").close()
    assert not left.exists()
    assert (tmp_path / "c" / INDEX_FILE).exists()
