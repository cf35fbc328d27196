#!/usr/bin/env bash
# Records Debian's real MPI codes at several rank counts for `heapscope scaling`
# (BENCHMARKS.md, "Memory at scale"; docs/scaling.md): LAMMPS' Lennard-Jones melt with
# 32,000 atoms (n=20) at 1, 2, 4, 8 ranks and the larger run at 16 that checks the
# predictions, and at n=14 (10,976 atoms) at 1-8 ranks (--by n); NWChem's SCF of water
# (cc-pVDZ) at 1, 2, 4, 8 ranks and 16 (on a loaded 2-core machine its 8-rank run did not
# end in 17 minutes: ARMCI polls); GROMACS' mdrun on a water box at 1, 2, 4, 8 and 16. Every run is `heapscope record --track` (the call
# paths at each rank's peak). Open MPI against MPICH on one job: tests/mpi/test_scaling.py's
# program (BENCHMARKS.md).
#
#   scripts/bench_scaling_real.sh OUT [lammps|gromacs|nwchem ...]     (default: all three)
#   HEAPSCOPE='.venv/bin/python -m heapscope' to use a checkout's own build
#
# Then, e.g.:
#   heapscope scaling OUT/lammps-n20-p{1,2,4,8} --predict 16 32 64
#   heapscope scaling OUT/lammps-n14-p{1,2,4,8} OUT/lammps-n20-p{1,2,4,8} --by n
#   heapscope scaling OUT/nwchem-p{1,2,4,8} --predict 16 32
#   heapscope scaling OUT/gromacs-p{1,2,4,8} --predict 16 32
# Packages: lammps lammps-examples gromacs nwchem (apt-get install).
set -euo pipefail
OUT=${1:?usage: bench_scaling_real.sh OUT [lammps|gromacs|nwchem ...]}
shift
WHAT=("${@:-lammps gromacs nwchem}")
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
  gromacs)
    # GROMACS 2022 (gmx_mpi, Open MPI): 100 steps of SPC/E water in a 3.2 nm box (about
    # 3,300 atoms, PME), one OpenMP thread a rank, no separate PME ranks
    work=$(mktemp -d)
    cd "$work"
    printf '#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spce.itp"\n[ system ]\nwater\n[ molecules ]\n' >topol.top
    gmx -quiet solvate -cs spc216.gro -box 3.2 3.2 3.2 -o water.gro -p topol.top >/dev/null 2>&1
    gmx -quiet grompp -f "$HERE/html_bench/gromacs_water.mdp" -c water.gro -p topol.top -o md.tpr \
      -maxwarn 2 >/dev/null 2>&1
    for p in 1 2 4 8 16; do
      record "gromacs-p$p" "${OMPI[@]}" -np "$p" gmx_mpi -quiet mdrun -s md.tpr -ntomp 1 -npme 0 \
        -deffnm md
    done
    cd "$OUT"
    rm -rf "$work" ;;
  nwchem)
    # Open MPI only: Debian's nwchem-mpich (7.0.2 on MPICH 4.0.2) gets this SCF wrong on
    # 2 ranks and more (-75.99 hartree against -76.027, "convergence stagnant"), with or
    # without the recorder; on 1 rank it agrees
    for p in 1 2 4 8 16; do
      work=$(mktemp -d)
      cp "$HERE/scaling_bench/nwchem_water.nw" "$work/"
      cd "$work"
      record "nwchem-p$p" "${OMPI[@]}" -np "$p" nwchem.openmpi nwchem_water.nw
      cd "$OUT"
      rm -rf "$work"
    done ;;
  *) echo "bench_scaling_real: unknown code $what (lammps, gromacs, nwchem)" >&2; exit 2 ;;
  esac
done
