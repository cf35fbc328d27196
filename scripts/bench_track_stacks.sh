#!/bin/sh
# What --track's default call paths cost: callgrind instructions of one whole run per
# configuration (instructions do not move with the other sessions' load): plain, --track
# without stacks (--sample-bytes off), with stacks sampled at 512 KiB and at 64 KiB (the
# default), and with every stack (--track --sizes all).
#
#   scripts/bench_track_stacks.sh BUILD_NATIVE_DIR [cxx] [fem] [lmp]
#
# BUILD_NATIVE_DIR: <cmake build dir>/native (or the installed heapscope/native). lmp runs
# LAMMPS's melt example (Debian's lammps and lammps-examples). Prints "config instructions".
set -eu
NATIVE=$1; shift
LIB=$NATIVE/lib/libheapscope.so
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
run() { # name VAR=value... -- command...
    name=$1; shift
    set -- env HEAPSCOPE_OUTPUT_DIR="$OUT" HEAPSCOPE_TIMELINE_MS=0 "$@"
    n=$(cd "$OUT" && "$@" 2>&1 >/dev/null | awk '/Collected/ {print $4}')
    echo "$name $n"
}
for w in "$@"; do
    case $w in
    cxx) set -- "$NATIVE/bin/hs-wl-cxx-churn" --ops 100000 ;;
    fem) set -- "$NATIVE/bin/hs-wl-fem-temporaries" ;;
    lmp) set -- lmp -in /usr/share/lammps/examples/melt/in.melt -log none -screen none ;;
    *) echo "unknown workload $w" >&2; exit 2 ;;
    esac
    CG="valgrind --tool=callgrind --callgrind-out-file=/dev/null"
    echo "== $w"
    run plain $CG "$@"
    run track-off LD_PRELOAD="$LIB" HEAPSCOPE_TRACK=1 $CG "$@"
    run track-512K LD_PRELOAD="$LIB" HEAPSCOPE_TRACK=1 HEAPSCOPE_SAMPLE_BYTES=524288 $CG "$@"
    run track-64K LD_PRELOAD="$LIB" HEAPSCOPE_TRACK=1 HEAPSCOPE_SAMPLE_BYTES=65536 $CG "$@"
    run track-all LD_PRELOAD="$LIB" HEAPSCOPE_TRACK=1 HEAPSCOPE_STACK_SIZES=all $CG "$@"
done
