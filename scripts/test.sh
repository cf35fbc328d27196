#!/usr/bin/env bash
# The whole test suite: set up on a fresh machine, then run every test with the
# interpreter of the checkout's .venv (where scripts/setup.sh installed heapscope).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# tests/mpi/test_slurm.py runs jobs on a real Slurm: as root, a single-node one is started
# here when none answers (scripts/slurm_local.sh; without root, or if it cannot start, the
# two tests skip and say why)
if [ "$(id -u)" -eq 0 ] && ! sinfo -h -t idle -o %n 2>/dev/null | grep -q .; then
  PATH=$PATH:/usr/sbin:/sbin bash scripts/slurm_local.sh ||
    echo "test: no local Slurm (above): tests/mpi/test_slurm.py will skip" >&2
fi
# Run from the checkout root: its python/ is no package path, so the installed package is tested
exec .venv/bin/python -m pytest tests "$@"
