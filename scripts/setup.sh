#!/usr/bin/env bash
# Installs everything heapscope and its tests need on a fresh Debian 12 machine, then
# heapscope itself into the checkout's own virtual environment (.venv), and links the
# `heapscope` command into ~/.local/bin. Called by scripts/demo.sh and scripts/test.sh;
# safe to run again (skips what is there). Every failure stops it with one line that
# says what failed.
#
#   PYTHON=/path/to/python3   base interpreter for .venv (default: Debian's /usr/bin/python3)
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "setup: $*" >&2; exit 1; }

# Debian packages: toolchain, unwinding and symbolization (libunwind, libdw/elfutils),
# the peer allocators and profilers we compare against, MPI (Open MPI, the default, and
# MPICH beside it for its own layer), Eigen for the FEM workload, graphviz for call
# graphs, LAMMPS as a real MPI application. What the tests call besides: Go for
# `go tool pprof` (pprof export), git (hsmalloc's git workload), python3-venv for .venv,
# chromium for the HTML report's browser tests (driven by pip's playwright, never a
# downloaded browser); clang-format for scripts/lint.sh; strace to count the system
# calls of stack unwinding. The real-code corpus (tests/real): Octave, GROMACS, Quantum
# ESPRESSO, FreeFem++, gmsh and CP2K as Debian ships them, and the PETSc and SUNDIALS
# development packages with their examples, which the corpus builds (cached) and runs.
# A single-node Slurm for tests/mpi/test_slurm.py (scripts/slurm_local.sh starts it):
# slurm-wlm and munge; `srun --mpi=pmix` loads PMIx's unversioned libpmix.so, which
# only libpmix-dev ships.
APT_PACKAGES=(
  build-essential cmake ninja-build gfortran pkg-config git clang-format
  python3 python3-venv
  libunwind-dev libdw-dev libelf-dev elfutils binutils zlib1g-dev libzstd-dev
  libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0
  heaptrack valgrind hyperfine strace
  openmpi-bin libopenmpi-dev mpich libmpich-dev
  slurm-wlm munge libpmix-dev
  libeigen3-dev graphviz golang-go chromium
  lammps lammps-examples
  octave gromacs quantum-espresso freefem++ gmsh cp2k
  libpetsc-real3.18-dev libpetsc3.18-dev-examples libsundials-dev
)
# Commands that may come from elsewhere (nodesource's nodejs brings its own npm, which
# Debian's npm package would fight): their package only when the command is missing.
# npm fetches the HTML report's pinned JavaScript (scripts/vendor_assets.py).
COMMAND_PACKAGES=(npm:npm)

installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  installed "$pkg" || missing+=("$pkg")
done
for entry in "${COMMAND_PACKAGES[@]}"; do
  command -v "${entry%%:*}" >/dev/null || missing+=("${entry#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  # dpkg needs ldconfig and start-stop-daemon from the sbin directories on PATH
  AS_ROOT=(env "PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin")
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null ||
      fail "not root and no sudo: as root run 'apt-get install ${missing[*]}', then run this again"
    AS_ROOT=(sudo "${AS_ROOT[@]}")
  fi
  echo "setup: installing Debian packages: ${missing[*]}"
  log=$(mktemp "${TMPDIR:-/tmp}/heapscope-apt.XXXXXX")
  # --error-on=any: a mirror that cannot be reached fails here, not as "no candidate" later
  "${AS_ROOT[@]}" apt-get update -q --error-on=any >"$log" 2>&1 ||
    fail "apt-get update failed (package index unreachable? see $log; check /etc/apt/sources.list.d/ and the network, or install by hand: ${missing[*]})"
  unavailable=()
  for pkg in "${missing[@]}"; do
    # (no grep -q on a pipe: with pipefail, the writer's SIGPIPE would fail the test)
    [[ "$(apt-cache policy "$pkg" 2>/dev/null)" == *"Candidate: "[0-9]* ]] || unavailable+=("$pkg")
  done
  [ ${#unavailable[@]} -eq 0 ] ||
    fail "no Debian package to install for: ${unavailable[*]} (not Debian 12, or a component missing from /etc/apt/sources.list.d/?)"
  "${AS_ROOT[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >>"$log" 2>&1 ||
    fail "apt-get install failed: $(grep '^E:' "$log" | tail -1 || true) (full log: $log)"
  rm -f "$log"
fi

# Open MPI stays the default MPI (plain mpicc, mpirun, mpi.h) with MPICH installed too
bash scripts/mpi_default.sh

# The venv's base interpreter: Debian's own when there is one. A venv links to its base,
# so one made from a pyenv or conda Python breaks when that Python is removed or
# upgraded; /usr/bin/python3 is kept by apt together with python3-venv, which we install.
BASE=${PYTHON:-}
if [ -z "$BASE" ]; then
  if [ -x /usr/bin/python3 ]; then BASE=/usr/bin/python3; else BASE=$(command -v python3 || true); fi
fi
[ -n "$BASE" ] && "$BASE" -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null ||
  fail "no Python 3.9 or newer at '${BASE:-python3}': apt-get install python3 python3-venv, or set PYTHON"
realpath_of() { "$1" -c 'import os, sys; print(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))' 2>/dev/null; }
BASE=$("$BASE" -c 'import sys; print(sys.executable)')

VENV=$PWD/.venv
# Reuse .venv while it runs and was made from the same base; otherwise make it anew
if [ -e "$VENV" ]; then
  made_from=$(realpath_of "$VENV/bin/python" || true)
  if [ -z "$made_from" ] || [ "$made_from" != "$(realpath_of "$BASE")" ]; then
    echo "setup: $VENV is broken or made from another Python (${made_from:-unknown}): making it anew"
    rm -rf "$VENV"
  fi
fi
if [ ! -e "$VENV" ]; then
  echo "setup: creating $VENV from $BASE"
  "$BASE" -m venv "$VENV" ||
    fail "'$BASE -m venv' failed: apt-get install python3-venv (or the venv module of that Python)"
fi

# the HTML report's pinned JavaScript (npm pack, sha512 checked), package data of heapscope
"$VENV/bin/python" scripts/vendor_assets.py ||
  fail "scripts/vendor_assets.py could not put the HTML report's JavaScript in place (output above)"

echo "setup: building and installing heapscope into $VENV (pip install .[test])"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check ".[test]" ||
  fail "pip install .[test] into $VENV failed (output above)"

# The command where a user finds it: ~/.local/bin is on PATH in Debian's default
# ~/.profile once it exists. A file there that is not our link is left alone.
link="${HOME:?}/.local/bin/heapscope"
if [ -L "$link" ] || [ ! -e "$link" ]; then
  mkdir -p "$(dirname "$link")"
  ln -sfn "$VENV/bin/heapscope" "$link"
  case ":$PATH:" in
    *":$(dirname "$link"):"*) on_path="" ;;
    *) on_path=" (not on PATH: add $(dirname "$link") to it)" ;;
  esac
  echo "setup: heapscope is $link -> $VENV/bin/heapscope$on_path; or '. .venv/bin/activate'"
else
  echo "setup: $link exists and is not a link: left alone; use $VENV/bin/heapscope or '. .venv/bin/activate'"
fi
