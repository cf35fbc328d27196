#!/usr/bin/env bash
# The whole test suite: set up on a fresh machine, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Run from a directory outside the source tree's python/ so the installed package is tested.
exec "${PYTHON:-python3}" -m pytest tests "$@"
