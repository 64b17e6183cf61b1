"""Fuzzing: schemathesis generates valid and invalid requests for every operation of the
published OpenAPI document and runs every check it has (no 5xx, status codes, content types,
headers and bodies as documented, invalid data rejected, valid data accepted, auth enforced,
Allow on 405, ...) against the app in-process (ASGI), with a real token on the real embedded
engine. CI runs a bounded number of examples; `pytest -m fuzz_long` runs many more."""

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.config import SchemathesisConfig
from schemathesis.python import asgi

from app.auth import Authenticator
from app.config import Settings
from app.embeddings.dense import HashingEncoder
from app.main import create_app
from tests.helpers import JWT_SECRET, token

load_all_checks()
ALL_CHECKS = CHECKS.get_all()
QUICK_EXAMPLES = 25
# The backup takes no parameter: its examples differ only in the token the auth checks vary,
# and each one that passes streams a whole backup (~250 MB of a new index's sparse files).
BACKUP = "/api/v1/admin/backup"
BACKUP_EXAMPLES = 3
LONG_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "1000"))
FUZZ_SETTINGS = settings(
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,  # CI failures reproduce; the long run is where new inputs come from
    database=None,
)


# Built at import: schemathesis binds operations to the app when it collects them. Nothing
# runs until the first request starts the lifespan (engine in a temporary directory).
DATA_DIR = Path(tempfile.mkdtemp(prefix="astrolabe-fuzz-"))
APP = create_app(
    Settings(data_dir=DATA_DIR / "data", jwt_secret=JWT_SECRET),
    authenticator=Authenticator(JWT_SECRET, {}),
    dense=HashingEncoder(),
)
# A schema-valid request can still be refused with a 400 for what JSON Schema cannot say (an
# inverted date range, February 30, a relative file path), and the app dialect answers `rerank:
# true` with its documented 422: positive data may get those; never a 5xx or an undocumented
# status. Every other check runs as shipped.
# The token goes through schemathesis's own auth (not as a header over each case): a header set
# over a case hides the negative cases that drop it, and they were then reported as accepted.
CONFIG = SchemathesisConfig.from_dict(
    {
        "auth": {"openapi": {"HTTPBearer": {"bearer": token("alice", ttl=86_400)}}},
        "checks": {
            "positive_data_acceptance": {
                "expected-statuses": ["2xx", "3xx", "400", "401", "403", "404", "409", "422", "429"]
            }
        },
    }
)
schema = schemathesis.openapi.from_dict(APP.openapi(), config=CONFIG)
schema.app = APP  # what from_asgi does, without starting the app to fetch the document


@pytest.fixture(scope="module", autouse=True)
def _remove_data_dir() -> Iterator[None]:
    yield
    shutil.rmtree(DATA_DIR, ignore_errors=True)


def _wait_until_ready(app: Any) -> None:
    """schemathesis runs the app's lifespan per test; the engine loads in a thread."""
    state = app.state.astrolabe
    with asgi.get_client(app) as client:
        client.get("/healthz")  # starts the lifespan if this test has not yet
    deadline = time.monotonic() + 60
    while state.services is None and state.error is None and time.monotonic() < deadline:
        time.sleep(0.02)


def _fuzz(case: Any) -> None:
    _wait_until_ready(APP)
    case.call_and_validate(checks=ALL_CHECKS)


@schema.exclude(path=BACKUP).parametrize()
@settings(FUZZ_SETTINGS, max_examples=QUICK_EXAMPLES)
def test_every_operation(case: Any) -> None:
    _fuzz(case)


@schema.include(path=BACKUP).parametrize()
@settings(FUZZ_SETTINGS, max_examples=BACKUP_EXAMPLES)
def test_the_backup_operation(case: Any) -> None:
    _fuzz(case)


@pytest.mark.fuzz_long
@schema.parametrize()
@settings(FUZZ_SETTINGS, max_examples=LONG_EXAMPLES)
def test_every_operation_at_length(case: Any) -> None:
    _fuzz(case)
