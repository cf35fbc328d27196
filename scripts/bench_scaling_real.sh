#!/usr/bin/env bash
# Records Debian's real MPI codes at several rank counts for `heapscope scaling`
# (BENCHMARKS.md, "Memory at scale"; docs/scaling.md): LAMMPS' Lennard-Jones melt with
# 32,000 atoms (n=20) at 1, 2, 4, 8 ranks and the larger run at 16 that checks the
# predictions, and at n=14 (10,976 atoms) at 1-8 ranks (--by n); NWChem's SCF of water
# under Open MPI and under MPICH (Debian's nwchem-openmpi and nwchem-mpich: the same code
# and input on each MPI) at 1, 2, 4, 8 ranks and 16 under Open MPI. Every run is
# `heapscope record --track` (the call paths at each rank's peak).
#
#   scripts/bench_scaling_real.sh OUT [lammps|nwchem ...]     (default: both)
#   HEAPSCOPE='.venv/bin/python -m heapscope' to use a checkout's own build
#
# Then, e.g.:
#   heapscope scaling OUT/lammps-n20-p{1,2,4,8} --predict 16 32 64
#   heapscope scaling OUT/nwchem-openmpi-p{1,2,4,8} OUT/nwchem-mpich-p{1,2,4,8}
# Packages: lammps lammps-examples nwchem-openmpi nwchem-mpich (apt-get install).
set -euo pipefail
OUT=${1:?usage: bench_scaling_real.sh OUT [lammps|nwchem ...]}
shift
WHAT=("${@:-lammps nwchem}")
HERE=$(cd "$(dirname "$0")" && pwd)
read -r -a HS <<<"${HEAPSCOPE:-heapscope}"
OMPI=(mpirun --oversubscribe --allow-run-as-root)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

record() {   # record NAME LAUNCHER... -- PROGRAM...: one run into OUT/NAME, its output kept
  local name=$1
  shift
  rm -rf "${OUT:?}/$name"
  local start=$SECONDS
  "${HS[@]}" record --track -o "$OUT/$name" -- "$@" >"$OUT/$name.log" 2>&1 ||
    { echo "bench_scaling_real: $name failed (see $OUT/$name.log)" >&2; exit 1; }
  echo "$name: $((SECONDS - start)) s"
}

for what in ${WHAT[*]}; do
  case $what in
  lammps)
    work=$(mktemp -d)
    cd "$work"
    for p in 1 2 4 8 16; do
      record "lammps-n20-p$p" "${OMPI[@]}" -np "$p" lmp -in "$HERE/scaling_bench/lammps_lj.in" \
        -var n 20 -log none
    done
    for p in 1 2 4 8; do
      record "lammps-n14-p$p" "${OMPI[@]}" -np "$p" lmp -in "$HERE/scaling_bench/lammps_lj.in" \
        -var n 14 -log none
    done
    rm -rf "$work" ;;
  nwchem)
    for mpi in openmpi mpich; do
      counts=(1 2 4 8)
      [ "$mpi" = openmpi ] && counts+=(16)
      for p in "${counts[@]}"; do
        work=$(mktemp -d)
        cp "$HERE/scaling_bench/nwchem_water.nw" "$work/"
        cd "$work"
        if [ "$mpi" = openmpi ]; then
          record "nwchem-$mpi-p$p" "${OMPI[@]}" -np "$p" nwchem.openmpi nwchem_water.nw
        else
          record "nwchem-$mpi-p$p" mpirun.mpich -np "$p" nwchem.mpich nwchem_water.nw
        fi
        cd "$OUT"
        rm -rf "$work"
      done
    done ;;
  *) echo "bench_scaling_real: unknown code $what (lammps, nwchem)" >&2; exit 2 ;;
  esac
done
