#!/usr/bin/env bash
# The whole test suite: set up on a fresh machine, then run every test with the
# interpreter of the checkout's .venv (where scripts/setup.sh installed heapscope).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Run from the checkout root: its python/ is no package path, so the installed package is tested
exec .venv/bin/python -m pytest tests "$@"
