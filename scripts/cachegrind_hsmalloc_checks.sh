#!/bin/sh
# The checks' cost where the machine's load cannot blur it: cachegrind's counts of
# instructions, data references, simulated cache misses and branch mispredictions for
# whole runs under the unchecked library (a revision before the checks), the current
# tree with the default checks taken out (scripts/build_hsmalloc_unchecked.sh: the
# same code otherwise, so the difference is the checks alone), the checked one and the
# checked one with HSMALLOC_SECURE=1 (the libraries scripts/bench_hsmalloc_checks.sh
# leaves in bench-results/). Prints one line per run.
#   scripts/cachegrind_hsmalloc_checks.sh
set -eu
cd "$(dirname "$0")/.."
OLD=bench-results/hsmalloc-unchecked/native/lib/libhsmalloc.so
NEW=build/native/lib/libhsmalloc.so
B=build/native/bin
[ -f "$OLD" ] || { echo "run scripts/bench_hsmalloc_checks.sh first (it builds $OLD)" >&2; exit 2; }
STRIPPED=$(scripts/build_hsmalloc_unchecked.sh bench-results/hsmalloc-stripped)
one() { # NAME LIB SECURE CMD...
    name=$1 lib=$2 secure=$3
    shift 3
    HSMALLOC_SECURE=$secure LD_PRELOAD=$lib valgrind --tool=cachegrind --cache-sim=yes \
        --branch-sim=yes --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        awk -v n="$name" '/I +refs:/ {i=$NF} /D +refs:/ {d=$4} /D1 +misses:/ {m=$4}
            /LLd misses:/ {l=$4} /Mispredicts:/ {b=$3}
            END {printf "%-10s I %s  D %s  D1 miss %s  LLd miss %s  mispredicts %s\n", n, i, d, m, l, b}'
}
run() {
    echo "$*"
    one unchecked "$OLD" 0 "$@"
    one stripped "$STRIPPED" 0 "$@"
    one checked "$NEW" 0 "$@"
    one secure "$NEW" 1 "$@"
}
run $B/hs-wl-small-churn --ops 1000000
run $B/hs-wl-cxx-churn --ops 200000
run $B/hs-wl-ghost-cells --ops 500000
run $B/hs-wl-prodcon --batches 5000
run /usr/bin/lmp -in /usr/share/lammps/examples/melt/in.melt -log none -screen none
run /usr/bin/gmsh -3 workloads/apps/sphere-in-box.geo -o /tmp/hs-cachegrind.msh -v 0
