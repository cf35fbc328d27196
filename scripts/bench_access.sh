#!/bin/sh
# What record --access costs: CPU time (user + sys) of interleaved runs against the plain
# run, with the stacks' sampling alone beside it (the same samples, not measured), on the
# C++ churn, two C malloc-heavy workloads of ours, real C programs (mimalloc-bench's cfrac
# and espresso, Debian's perl filling and emptying a hash) and LAMMPS; then callgrind's
# instructions (user space only: a sample's page fault and the watcher's system calls are
# not in them).
#
#   MIMALLOC_BENCH=CHECKOUT scripts/bench_access.sh BUILD_NATIVE_DIR [ROUNDS]
#       (CALLGRIND_ONLY=1: the instructions only)
#
# BUILD_NATIVE_DIR: <cmake build dir>/native. LAMMPS: Debian's lammps + lammps-examples.
# MIMALLOC_BENCH: a checkout of mimalloc-bench (its bench/ directory is enough, e.g.
# `git --git-dir=MIRROR archive HEAD bench | tar x -C CHECKOUT`); cfrac and espresso are
# built from it by scripts/bench_mimalloc_suite.py (no network); unset, they are left out.
# PYTHON: a Python with heapscope's dependencies (default: the checkout's .venv, else python3).
set -eu
NATIVE=$(cd "$1" && pwd) # absolute: LAMMPS runs in its input's directory
ROUNDS=${2:-15}
LIB=$NATIVE/lib/libheapscope.so
HERE=$(cd "$(dirname "$0")" && pwd)
MELT=$(mktemp -d)
trap 'rm -rf "$MELT"' EXIT
cp /usr/share/lammps/examples/melt/in.melt "$MELT/"
# the CPU runs: 2,000 steps (4 s), so the recorder's fixed start and exit (some 50 ms) do
# not stand for its cost per unit of work; callgrind: the example's 250
sed 's/^run[[:space:]]*250/run 2000/' "$MELT/in.melt" >"$MELT/in.long"
PY=${PYTHON:-$HERE/../.venv/bin/python}
[ -x "$PY" ] || PY=python3
# a real C program that allocates a lot: perl's hash of a million strings, filled and emptied
perl_hash() { # keys
    printf '%s\n' 'my %h; for my $i (1..'"$1"') { $h{"k$i"} = "v" x ($i % 90) } delete $h{"k$_"} for 1..'"$1"'; print scalar(keys %h), "\n"'
}
MB_CMDS=""
if [ -n "${MIMALLOC_BENCH:-}" ]; then
    MB_CMDS=$("$PY" "$HERE/bench_mimalloc_suite.py" "$MIMALLOC_BENCH" --only cfrac,espresso \
        --build "$MELT/mimalloc-bench" --build-only)
fi
CONFIGS="plain=none sampled=$LIB:HEAPSCOPE_SAMPLE_BYTES=524288 access=$LIB:HEAPSCOPE_SAMPLE_BYTES=524288,HEAPSCOPE_ACCESS=1"
if [ -z "${CALLGRIND_ONLY:-}" ]; then
    python3 "$HERE/bench_recorder_ab.py" "$ROUNDS" "$NATIVE/bin/hs-wl-cxx-churn" -- $CONFIGS
    python3 "$HERE/bench_recorder_ab.py" "$ROUNDS" "$NATIVE/bin/hs-wl-small-churn" --ops 16000000 -- $CONFIGS
    python3 "$HERE/bench_recorder_ab.py" "$ROUNDS" "$NATIVE/bin/hs-wl-hot-odd" --rounds 100000 -- $CONFIGS
    python3 "$HERE/bench_recorder_ab.py" "$ROUNDS" /usr/bin/perl -e "$(perl_hash 1000000)" -- $CONFIGS
    echo "$MB_CMDS" | while read -r row cmd; do
        if [ -n "$row" ]; then python3 "$HERE/bench_recorder_ab.py" "$ROUNDS" $cmd -- $CONFIGS; fi
    done
    (cd "$MELT" && python3 "$HERE/bench_recorder_ab.py" "$ROUNDS" /usr/bin/lmp -in in.long -log none -screen none -- $CONFIGS)
fi

echo "== callgrind: instructions, whole program (millions)"
run() { # name workload-args...
    name=$1; shift
    n=$(cd "$MELT" && env HEAPSCOPE_OUTPUT_DIR="$MELT" "$@" 2>&1 >/dev/null | awk '/Collected/ {print $4}')
    echo "$name $n"
}
CG="valgrind --tool=callgrind --callgrind-out-file=/dev/null"
for w in cxx small hot perl lmp; do
    case $w in
    cxx) set -- "$NATIVE/bin/hs-wl-cxx-churn" --ops 100000 ;;
    small) set -- "$NATIVE/bin/hs-wl-small-churn" --ops 1000000 ;;
    hot) set -- "$NATIVE/bin/hs-wl-hot-odd" --rounds 20000 ;;
    perl) set -- /usr/bin/perl -e "$(perl_hash 100000)" ;;
    lmp) set -- /usr/bin/lmp -in in.melt -log none -screen none ;;
    esac
    echo "-- $w"
    run plain $CG "$@"
    run sampled env LD_PRELOAD="$LIB" HEAPSCOPE_SAMPLE_BYTES=524288 $CG "$@"
    run access env LD_PRELOAD="$LIB" HEAPSCOPE_SAMPLE_BYTES=524288 HEAPSCOPE_ACCESS=1 $CG "$@"
done
