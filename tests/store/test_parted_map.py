"""The map in parts (app/store/parted_map.py) answers as one dict would, under any mix of
insertions, replacements and removals."""

from hypothesis import given
from hypothesis import strategies as st

from app.store.parted_map import PartedMap

keys = st.text(min_size=1, max_size=6)
operations = st.lists(
    st.tuples(st.sampled_from(("set", "pop", "update")), keys, st.integers()), max_size=200
)


@given(operations)
def test_it_answers_as_a_dict_does(ops: list[tuple[str, str, int]]) -> None:
    parted: PartedMap[int] = PartedMap()
    plain: dict[str, int] = {}
    for op, key, value in ops:
        if op == "set":
            parted[key] = value
            plain[key] = value
        elif op == "pop":
            assert parted.pop(key) == plain.pop(key, None)
        else:
            parted.update([(key, value), (key + "x", value + 1)])
            plain.update([(key, value), (key + "x", value + 1)])
        assert parted.get(key) == plain.get(key)
    assert len(parted) == len(plain)
    assert dict(parted.items()) == plain
    assert sorted(parted.items()) == sorted(plain.items())  # each key once


def test_a_map_built_from_pairs_holds_them_all() -> None:
    pairs = [(f"id-{n}", n) for n in range(10_000)]
    parted = PartedMap(pairs)
    assert len(parted) == 10_000
    assert all(parted.get(key) == n for key, n in pairs)
    assert parted.get("id-10000") is None
