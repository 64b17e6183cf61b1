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
