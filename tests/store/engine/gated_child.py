"""The engine child's program (`app.engine_child`) with its facet index's load from the shard
held at a gate: the slow part of a start after an unclean stop, held for as long as a test
likes. The gate is the file `ASTROLABE_TEST_FACET_GATE` names; beside it the child leaves
`<gate>.reached` when the load waits and `<gate>.loaded` when it is done."""

if __name__ == "__main__":  # as app.engine_child: qdrant-client's models first
    from app.store.qdrant_models import import_models_only

    import_models_only()

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from app import engine_child
from app.store.facet_upkeep import FacetUpkeep

GATE_ENV = "ASTROLABE_TEST_FACET_GATE"
MODULE = "tests.store.engine.gated_child"


def reached(gate: Path) -> Path:
    return gate.with_name(gate.name + ".reached")


def loaded(gate: Path) -> Path:
    return gate.with_name(gate.name + ".loaded")


def held(load: Callable[[FacetUpkeep], None]) -> Callable[[FacetUpkeep], None]:
    def run(upkeep: FacetUpkeep) -> None:
        gate = Path(os.environ[GATE_ENV])
        reached(gate).touch()
        while not gate.exists() and not upkeep._closing.is_set():
            time.sleep(0.02)
        load(upkeep)
        loaded(gate).touch()

    return run


if __name__ == "__main__":
    FacetUpkeep._load = held(FacetUpkeep._load)  # type: ignore[method-assign,assignment]
    sys.exit(engine_child.main())
