from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.embeddings.dense import HashingEncoder, MiniLMEncoder
from tests.helpers import doc, index, running_app


@pytest.fixture(scope="session")
def minilm() -> MiniLMEncoder:
    """The real all-MiniLM-L6-v2, loaded once for the whole session."""
    return MiniLMEncoder()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """The app on the real embedded engine with the fast hashing embedder."""
    with running_app(tmp_path / "data", HashingEncoder()) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One app for the read-only error cases of a test module; it holds document note:1."""
    with running_app(tmp_path_factory.mktemp("app") / "data", HashingEncoder()) as client:
        index(client, doc("1", "the only document"))
        yield client


@pytest.fixture
def model_client(tmp_path: Path, minilm: MiniLMEncoder) -> Iterator[TestClient]:
    """The app on the real embedded engine with the real model."""
    with running_app(tmp_path / "data", minilm) as test_client:
        yield test_client


# Run first, on both cores: the modules that take longest (tests/store/engine and the page tests
# start processes and wait on them; fuzz runs every operation). With `--dist loadscope` a module
# stays on one worker, so one that started last would be the tail of the whole run.
SLOW_FIRST = (
    "tests/store/engine/test_handover_crash.py",
    "tests/test_fuzz.py",
    "tests/store/engine/test_supervisor.py",
    "tests/browser/test_page_in_use.py",
    "tests/bench/test_harness_smoke.py",
    "tests/store/test_congruence.py",
    "tests/embeddings/test_dense_onnx.py",
    "tests/browser/test_search_page.py",
    "tests/mcp/test_endpoint.py",
    "tests/store/test_data_dir.py",
    "tests/extract/test_ocr.py",
    "tests/nextcloud/test_connector.py",
    "tests/extract/test_legacy_formats_api.py",
    "tests/bench/test_connector_smoke.py",
    "tests/browser/test_sync_state.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        # schemathesis (4.32, under pytest 9) names every operation's test alike; its label
        # makes the id unique, which xdist needs to send each one to a worker.
        label = getattr(item, "operation_label", None)
        if isinstance(label, str) and item.parent is not None and item.name.endswith(f"[{label}]"):
            item._id = item.parent.id.child(item.name)
    rank = {path: n for n, path in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
