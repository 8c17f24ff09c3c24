#!/usr/bin/env bash
# Set up torchfix in .venv on a fresh machine: the CPU torch wheel first (pinned, so pip never
# pulls a multi-GB CUDA build to satisfy the `torch` requirement), then the project and its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e '.[test]'
