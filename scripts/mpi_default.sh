#!/usr/bin/env bash
# Keeps Open MPI Debian's default MPI with MPICH installed beside it (called by
# scripts/setup.sh). The plain mpicc/mpif90 (alternative "mpi"), mpirun/mpiexec
# ("mpirun") and mpi.h, libmpi.so, mpi.pc ("mpi-<multiarch>") must stay Open MPI's: the
# suite and libheapscope_mpi.so are built with them; MPICH is used by its own names
# (mpicc.mpich, mpirun.mpich, pkg-config mpich). In auto mode Debian keeps Open MPI
# (priority 50 against MPICH's 40 on amd64), but an alternative set by hand, or a
# Debian architecture that prefers MPICH, is set back to Open MPI here.
set -euo pipefail
SUDO=()
if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo); fi

update-alternatives --get-selections | while read -r name _mode value; do
  case "$name" in mpi | mpirun | mpi-*) ;; *) continue ;; esac
  case "$value" in *openmpi*) continue ;; esac
  if ! target=$(update-alternatives --list "$name" | grep -m1 openmpi); then
    echo "setup: alternative $name points at $value and Open MPI offers none" >&2
    exit 1
  fi
  echo "setup: alternative $name pointed at $value: set back to Open MPI's $target"
  if [ ${#SUDO[@]} -gt 0 ] && ! command -v sudo >/dev/null; then
    echo "setup: not root and no sudo: as root run 'update-alternatives --set $name $target'" >&2
    exit 1
  fi
  "${SUDO[@]}" update-alternatives --quiet --set "$name" "$target"
done
if ! mpirun --version 2>&1 | grep -q "Open MPI"; then
  echo "setup: mpirun is not Open MPI's: $(command -v mpirun) -> $(readlink -f "$(command -v mpirun)")" >&2
  exit 1
fi
