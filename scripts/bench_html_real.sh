#!/usr/bin/env bash
# The HTML page's size and time on real programs (BENCHMARKS.md, "HTML report: page size
# and time to show"): records Octave, Quantum ESPRESSO's pw.x on 2 ranks, LAMMPS' melt on
# 4 ranks and GROMACS' mdrun with --track --sizes all into DIR (default
# /tmp/heapscope-html-bench), then writes their pages with this tree and with BASE (a git
# revision) interleaved: scripts/bench_html.py --base BASE.
#   scripts/bench_html_real.sh [BASE] [RUNS] [DIR]
# Needs the Debian packages octave, quantum-espresso, quantum-espresso-data (the silicon
# pseudopotential), lammps-examples, gromacs; heapscope installed (scripts/setup.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
base=${1:-main} runs=${2:-5} dir=${3:-/tmp/heapscope-html-bench}
hs=${HEAPSCOPE:-$here/../.venv/bin/heapscope}
mpirun=(mpirun --allow-run-as-root --oversubscribe)
mkdir -p "$dir/qe/pseudo" "$dir/gmx"
cd "$dir"
for pkg in octave quantum-espresso quantum-espresso-data lammps-examples gromacs; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" ||
    { echo "bench_html_real: $pkg is not installed (apt-get install $pkg)" >&2; exit 1; }
done
rm -rf oct qe/rec lmp4 gmx/rec
"$hs" record --track --sizes all -o oct -- octave-cli -q "$here/html_bench/octave_loop.m" >/dev/null
zcat /usr/share/doc/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz > qe/pseudo/Si.pz-vbc.UPF
(cd qe && "$hs" record --track --sizes all -o rec -- "${mpirun[@]}" -np 2 pw.x \
   -in "$here/html_bench/qe_silicon.in" >/dev/null)
"$hs" record --track --sizes all -o lmp4 -- "${mpirun[@]}" -np 4 lmp -log none \
  -in /usr/share/lammps/examples/melt/in.melt >/dev/null
(cd gmx && printf '#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spce.itp"\n[ system ]\nwater\n[ molecules ]\n' > topol.top &&
 gmx -quiet solvate -cs spc216.gro -box 2 2 2 -o water.gro -p topol.top >/dev/null 2>&1 &&
 gmx -quiet grompp -f "$here/html_bench/gromacs_water.mdp" -c water.gro -p topol.top -o md.tpr >/dev/null 2>&1 &&
 "$hs" record --track --sizes all -o rec -- gmx -quiet mdrun -s md.tpr -nt 1 -deffnm md >/dev/null 2>&1)
exec "$(dirname "$hs")/python" "$here/bench_html.py" oct qe/rec lmp4 gmx/rec --runs "$runs" --base "$base"
