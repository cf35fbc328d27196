#!/usr/bin/env bash
# Real applications under glibc, hsmalloc and secure hsmalloc: the outputs compared byte
# for byte (what each program writes that does not depend on time), CPU seconds and max
# RSS of each run (one run each: for CPU figures use scripts/bench_alloc_ab.py).
#   scripts/hsmalloc_real_apps.sh [LIBHSMALLOC] [WORKDIR]
# LIBHSMALLOC defaults to $HEAPSCOPE_NATIVE_DIR/lib (or build/native/lib)/libhsmalloc.so;
# WORKDIR (default a fresh temporary directory) keeps each run's outputs (FreeFem++'s
# without its line of timings, LAMMPS's thermo lines). Programs (Debian
# packages, scripts/setup.sh): lmp (lammps, melt example), gmsh (3D mesh of
# workloads/apps/sphere-in-box.geo), FreeFem++-nw (workloads/apps/poisson-p2.edp), octave
# (a script of dense and sparse algebra, strings and cells; and workloads/apps/sparse-lu.m,
# whose UMFPACK workspace grows and shrinks by realloc), gmx (GROMACS: a water box, 500
# steps on one thread with -reprod). Exits 1 when an output differs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
native=${HEAPSCOPE_NATIVE_DIR:-$root/build/native}
lib=${1:-$native/lib/libhsmalloc.so}
work=${2:-$(mktemp -d /tmp/hs-real-apps.XXXXXX)}
measure=$native/bin/hs-measure
for tool in lmp gmsh FreeFem++-nw octave gmx; do
  command -v "$tool" >/dev/null || { echo "hsmalloc_real_apps: $tool is not installed: run scripts/setup.sh" >&2; exit 2; }
done
[ -f "$lib" ] || { echo "hsmalloc_real_apps: $lib is missing" >&2; exit 2; }
[ -x "$measure" ] || { echo "hsmalloc_real_apps: $measure is missing (build the native parts)" >&2; exit 2; }
mkdir -p "$work/in"
apps="$root/workloads/apps"

# inputs
cp /usr/share/lammps/examples/melt/in.melt "$work/in/in.melt"
cat > "$work/in/algebra.m" <<'EOF'
rand("seed", 42); randn("seed", 7);
A = rand(300); B = A * A' + 300 * eye(300);
x = B \ ones(300, 1);
e = eig(B);
S = sprandn(2000, 2000, 0.002) + speye(2000) * 10;
y = S \ (1:2000)';
words = arrayfun(@(k) sprintf("w%05d", k), 1:20000, "UniformOutput", false);
joined = strjoin(words(1:5000), ",");
parts = strsplit(joined, ",");
s = struct("a", num2cell(1:3000), "b", words(1:3000));
t = cellfun(@numel, parts);
printf("%.10e %.10e %.10e %d %d %d\n", sum(x), max(e), sum(y), numel(parts), sum(t), numel(s));
EOF
mkdir -p "$work/gmx"
cat > "$work/gmx/topol.top" <<'EOF'
#include "oplsaa.ff/forcefield.itp"
#include "oplsaa.ff/spce.itp"
[ system ]
water
[ molecules ]
EOF
cat > "$work/gmx/md.mdp" <<'EOF'
integrator = md
nsteps = 500
dt = 0.002
cutoff-scheme = Verlet
coulombtype = PME
rcoulomb = 1.0
rvdw = 1.0
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
gen-vel = yes
gen-seed = 1234
nstxout = 100
nstenergy = 50
constraints = h-bonds
EOF
(cd "$work/gmx" && gmx -quiet solvate -cs spc216.gro -box 2.5 2.5 2.5 -o conf.gro -p topol.top \
   >/dev/null 2>&1 && gmx -quiet grompp -f md.mdp -c conf.gro -p topol.top -o md.tpr \
   >/dev/null 2>&1) || { echo "hsmalloc_real_apps: GROMACS input preparation failed (see $work/gmx)" >&2; exit 2; }

# name; command (run in its own directory); the files whose bytes must match
run_app() { # config preload secure name dir cmd...
  local config=$1 preload=$2 secure=$3 name=$4 dir=$5; shift 5
  local out="$work/$config/$name"
  rm -rf "$out" && mkdir -p "$out" && cp -r "$dir"/. "$out"/
  (cd "$out" && env ${preload:+LD_PRELOAD=$preload} HSMALLOC_SECURE=$secure \
     "$measure" usage.txt "$@" >stdout.txt 2>stderr.txt) || true
}
declare -A outputs=(
  [lammps]="thermo.txt" [gmsh]="out.msh" [freefem]="results.txt" [octave]="stdout.txt"
  [octave-lu]="stdout.txt" [gromacs]="md.gro md.edr")
status=0
for config in glibc hsmalloc secure; do
  preload=; secure=0
  [ "$config" != glibc ] && preload=$lib
  [ "$config" = secure ] && secure=1
  run_app "$config" "$preload" "$secure" lammps "$work/in" lmp -in in.melt -log none -echo none
  grep -E "^ +[0-9]+ +[-0-9.]+ " "$work/$config/lammps/stdout.txt" > "$work/$config/lammps/thermo.txt" || true
  run_app "$config" "$preload" "$secure" gmsh "$apps" gmsh -3 sphere-in-box.geo -o out.msh
  run_app "$config" "$preload" "$secure" freefem "$apps" FreeFem++-nw -ns poisson-p2.edp
  grep -v "^times:" "$work/$config/freefem/stdout.txt" > "$work/$config/freefem/results.txt" || true
  run_app "$config" "$preload" "$secure" octave "$work/in" octave --no-gui --norc -q algebra.m
  run_app "$config" "$preload" "$secure" octave-lu "$apps" octave --no-gui --norc -q sparse-lu.m
  run_app "$config" "$preload" "$secure" gromacs "$work/gmx" gmx -quiet mdrun -s md.tpr -deffnm md -nt 1 -reprod
done
printf "%-9s %-9s %-28s %s\n" app config "CPU s / max RSS MiB" "outputs"
for name in lammps gmsh freefem octave octave-lu gromacs; do
  for config in glibc hsmalloc secure; do
    u="$work/$config/$name/usage.txt"
    fig=$(awk '{for(i=1;i<=NF;i++){split($i,kv,"="); v[kv[1]]=kv[2]}} END{if (v["status"]!="0") print "exit status " v["status"]; else printf "%.2f / %.1f", (v["utime_us"]+v["stime_us"])/1e6, v["maxrss_kib"]/1024}' "$u")
    same=reference
    if [ "$config" != glibc ]; then
      same=identical
      for f in ${outputs[$name]}; do
        [ -s "$work/glibc/$name/$f" ] || same="no $f under glibc"
        cmp -s "$work/glibc/$name/$f" "$work/$config/$name/$f" || { same="$f differs"; status=1; }
      done
    fi
    printf "%-9s %-9s %-28s %s\n" "$name" "$config" "$fig" "$same"
  done
done
echo "outputs in $work"
exit $status
