#!/usr/bin/env bash
# Installs everything heapscope needs on a fresh Debian machine, then heapscope itself.
# Called by scripts/demo.sh and scripts/test.sh; safe to run again (skips what is there).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: toolchain, unwinding and symbolization (libunwind, libdw/elfutils),
# the peer allocators and profilers we compare against, MPI (Open MPI, the default, and
# MPICH beside it for its own layer), Eigen for the FEM workload, graphviz for call
# graphs, LAMMPS as a real MPI application.
APT_PACKAGES=(
  build-essential cmake ninja-build gfortran pkg-config
  libunwind-dev libdw-dev libelf-dev elfutils binutils zlib1g-dev libzstd-dev
  libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0
  heaptrack valgrind hyperfine
  openmpi-bin libopenmpi-dev mpich libmpich-dev
  libeigen3-dev graphviz
  lammps lammps-examples
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Open MPI stays the default MPI (plain mpicc, mpirun, mpi.h) with MPICH installed too
bash scripts/mpi_default.sh

PY=${PYTHON:-python3}
"$PY" scripts/vendor_assets.py   # the HTML report's pinned JavaScript (npm pack, sha512 checked)
echo "setup: building and installing heapscope (pip install .[test])"
"$PY" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
"$PY" -m pip install --quiet --root-user-action=ignore ".[test]"
