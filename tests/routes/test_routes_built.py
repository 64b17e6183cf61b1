"""The routers are built as the service starts (app.main.build_routes), not by the first
request to pass through them, and the request that builds them is seen by no log nor metric."""

from pathlib import Path

import pytest
from fastapi.routing import _IncludedRouter
from fastapi.testclient import TestClient

from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.main import UNROUTED_PATH, create_app
from app.telemetry.middleware import UNMATCHED
from tests.helpers import JWT_SECRET, auth


def test_every_router_is_built_before_the_first_request(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(
        Settings(data_dir=tmp_path / "data", jwt_secret=JWT_SECRET), dense=HashingEncoder()
    )
    # FastAPI's own state (the pinned version): an included router builds its routes lazily.
    routers = [route for route in app.router.routes if isinstance(route, _IncludedRouter)]
    assert routers and all(r._effective_candidates_version is None for r in routers)
    with TestClient(app) as client:
        assert all(r._effective_candidates_version is not None for r in routers)
        metrics = client.get("/metrics", headers=auth("ops", scope="index")).text
    assert UNROUTED_PATH not in caplog.text
    assert f'route="{UNMATCHED}"' not in metrics
