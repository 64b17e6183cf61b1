"""The rebuild journal: a reader sees whole records in the order they were written, never a
record still being written, and can stop at a given record."""

from pathlib import Path

from app.store.engine.journal import JournalReader, JournalWriter


def test_records_come_back_whole_and_in_order(tmp_path: Path) -> None:
    path = tmp_path / "journal"
    writer = JournalWriter(path)
    reader = JournalReader(path)
    assert reader.read() == []
    writer.append("upsert", (["a"], None))
    writer.append("delete", ({"doc": 1},))
    assert reader.read() == [("upsert", (["a"], None)), ("delete", ({"doc": 1},))]
    writer.append("set_payload", ({"tags": []}, {"doc": 2}))
    assert reader.read() == [("set_payload", ({"tags": []}, {"doc": 2}))]
    assert reader.records == 3
    writer.close()
    reader.close()


def test_a_record_being_written_is_not_read_yet(tmp_path: Path) -> None:
    path = tmp_path / "journal"
    writer = JournalWriter(path)
    writer.append("delete", ("first",))
    whole = path.read_bytes()
    writer.append("delete", ("second",))
    writer.close()
    complete = path.read_bytes()
    path.write_bytes(complete[: len(whole) + 6])  # the second one half written
    reader = JournalReader(path)
    assert reader.read() == [("delete", ("first",))]
    path.write_bytes(complete)
    assert reader.read() == [("delete", ("second",))]
    reader.close()


def test_reading_stops_at_the_record_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "journal"
    writer = JournalWriter(path)
    for n in range(5):
        writer.append("delete", (n,))
    writer.close()
    reader = JournalReader(path)
    assert [args for _, args in reader.read(up_to=2)] == [(0,), (1,)]
    assert [args for _, args in reader.read(up_to=4)] == [(2,), (3,)]
    reader.close()
