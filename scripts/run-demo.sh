#!/usr/bin/env bash
# Sets up, loads the bundled demo corpus into ./data (once), and serves it with a dev token.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
.venv/bin/astrolabe-search demo
exec .venv/bin/astrolabe-search serve --dev "$@"
