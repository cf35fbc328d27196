#!/usr/bin/env bash
# The main job: set up on a fresh machine, then profile the bundled FEM workload and
# print the identify report and the stack trace types of its hottest size, then write
# that recording as one offline HTML page and print its path.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/heapscope demo "$@"
