#!/bin/sh
# What record --access costs: CPU time (user + sys) of interleaved runs against the plain
# run, with the stacks' sampling alone beside it (the same samples, not measured), on the
# C++ churn, two C malloc-heavy programs and LAMMPS; then callgrind's instructions (user
# space only: a sample's page fault and the watcher's system calls are not in them).
#
#   scripts/bench_access.sh BUILD_NATIVE_DIR [ROUNDS]      (CALLGRIND_ONLY=1: the instructions only)
#
# BUILD_NATIVE_DIR: <cmake build dir>/native. LAMMPS: Debian's lammps + lammps-examples.
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
CONFIGS="plain=none sampled=$LIB:HEAPSCOPE_SAMPLE_BYTES=524288 access=$LIB:HEAPSCOPE_SAMPLE_BYTES=524288,HEAPSCOPE_ACCESS=1"
if [ -z "${CALLGRIND_ONLY:-}" ]; then
    python3 "$HERE/bench_recorder_ab.py" "$ROUNDS" "$NATIVE/bin/hs-wl-cxx-churn" -- $CONFIGS
    python3 "$HERE/bench_recorder_ab.py" "$ROUNDS" "$NATIVE/bin/hs-wl-small-churn" --ops 16000000 -- $CONFIGS
    python3 "$HERE/bench_recorder_ab.py" "$ROUNDS" "$NATIVE/bin/hs-wl-hot-odd" --rounds 100000 -- $CONFIGS
    (cd "$MELT" && python3 "$HERE/bench_recorder_ab.py" "$ROUNDS" /usr/bin/lmp -in in.long -log none -screen none -- $CONFIGS)
fi

echo "== callgrind: instructions, whole program (millions)"
run() { # name workload-args...
    name=$1; shift
    n=$(cd "$MELT" && env HEAPSCOPE_OUTPUT_DIR="$MELT" "$@" 2>&1 >/dev/null | awk '/Collected/ {print $4}')
    echo "$name $n"
}
CG="valgrind --tool=callgrind --callgrind-out-file=/dev/null"
for w in cxx small hot lmp; do
    case $w in
    cxx) set -- "$NATIVE/bin/hs-wl-cxx-churn" --ops 100000 ;;
    small) set -- "$NATIVE/bin/hs-wl-small-churn" --ops 1000000 ;;
    hot) set -- "$NATIVE/bin/hs-wl-hot-odd" --rounds 20000 ;;
    lmp) set -- /usr/bin/lmp -in in.melt -log none -screen none ;;
    esac
    echo "-- $w"
    run plain $CG "$@"
    run sampled env LD_PRELOAD="$LIB" HEAPSCOPE_SAMPLE_BYTES=524288 $CG "$@"
    run access env LD_PRELOAD="$LIB" HEAPSCOPE_SAMPLE_BYTES=524288 HEAPSCOPE_ACCESS=1 $CG "$@"
done
