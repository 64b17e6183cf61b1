#!/usr/bin/env bash
# Sets up, then runs every check CI runs: lint, format, types, the whole test suite with its
# coverage report (the run fails below the floor).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
.venv/bin/ruff check app tests bench scripts
.venv/bin/ruff format --check app tests bench scripts
.venv/bin/mypy
.venv/bin/lint-imports --no-cache
# One worker a core; a module's tests stay together on one worker (its module-scoped fixtures
# are built once), the slowest modules first (tests/conftest.py).
.venv/bin/python -m pytest -n auto --dist loadscope \
  --cov --cov-report=term-missing:skip-covered --cov-fail-under=90 "$@"
