#!/usr/bin/env bash
# Sets up, then runs every check CI runs: lint, format, types, the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
.venv/bin/ruff check app tests bench scripts
.venv/bin/ruff format --check app tests bench scripts
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
