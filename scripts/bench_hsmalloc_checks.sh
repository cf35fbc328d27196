#!/bin/sh
# What hsmalloc's misuse checks cost: the bundled workloads under libhsmalloc.so built
# from BASE (a revision without the checks), the current tree with the default checks
# taken out (scripts/build_hsmalloc_unchecked.sh), the current build (default checks)
# and the current build with HSMALLOC_SECURE=1, in interleaved rounds
# (scripts/bench_recorder_ab.py: CPU time, medians, ratios with bootstrap intervals),
# then callgrind's instructions per malloc+free pair (not disturbed by other jobs).
#
#   scripts/bench_hsmalloc_checks.sh [ROUNDS [BASE [WORKLOAD...]]]
#     ROUNDS   interleaved rounds per workload (default 15)
#     BASE     git revision without the checks (default 40a3a87)
#
# Needs the current tree built in build/ (cmake -S . -B build -G Ninja && cmake --build
# build); BASE's allocator is compiled into bench-results/hsmalloc-unchecked/.
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${1:-15}
BASE=${2:-40a3a87}
[ $# -ge 2 ] && shift 2 || shift $#
WORKLOADS=${*:-small-churn cxx-churn map-churn ghost-cells fem-temporaries mesh-refine prodcon handover thread-churn}
NATIVE=$PWD/build/native
OLD=$PWD/bench-results/hsmalloc-unchecked
[ -x "$NATIVE/bin/hs-wl-small-churn" ] || { echo "bench_hsmalloc_checks: build/ is not built" >&2; exit 2; }
rm -rf "$OLD" && mkdir -p "$OLD/src" "$OLD/native/lib"
git archive "$BASE" src/allocator include | tar -x -C "$OLD/src"
gcc -shared -fPIC -O2 -fvisibility=hidden -ftls-model=initial-exec -fno-builtin-malloc \
    -fno-builtin-free -fno-stack-protector -Wno-missing-attributes -pthread \
    -I "$OLD/src/include" -I "$OLD/src/src/allocator" -o "$OLD/native/lib/libhsmalloc.so" \
    "$OLD"/src/src/allocator/*.c -ldl
ln -s "$NATIVE/bin" "$OLD/native/bin"
STRIPPED=$PWD/bench-results/hsmalloc-stripped
scripts/build_hsmalloc_unchecked.sh "$STRIPPED" >/dev/null
ln -s "$NATIVE/bin" "$STRIPPED/native/bin"
# a copy, so that a rebuild during the runs does not change what is measured
NEW=$PWD/bench-results/hsmalloc-checked.so
cp "$NATIVE/lib/libhsmalloc.so" "$NEW"
echo "unchecked: $BASE; checked: $(git rev-parse --short HEAD) ($(git status --porcelain src/allocator | wc -l) files changed)"
for w in $WORKLOADS; do
    echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
    python3 scripts/bench_recorder_ab.py "$ROUNDS" "$NATIVE/bin/hs-wl-$w" -- \
        unchecked="$OLD/native/lib/libhsmalloc.so" stripped="$STRIPPED/native/lib/libhsmalloc.so" \
        checked="$NEW" secure="$NEW:HSMALLOC_SECURE=1"
done
for lib in "$OLD/native" "$STRIPPED/native" "$NATIVE"; do
    echo "callgrind, $lib:"
    ALLOCATORS=hsmalloc workloads/tools/callgrind_pairs.sh "$lib" 1010000 small-churn --ops 1000000
    ALLOCATORS=hsmalloc workloads/tools/callgrind_pairs.sh "$lib" 3100000 ghost-cells
done
echo "callgrind, $NATIVE with HSMALLOC_SECURE=1:"
HSMALLOC_SECURE=1 ALLOCATORS=hsmalloc workloads/tools/callgrind_pairs.sh "$NATIVE" 1010000 small-churn --ops 1000000
HSMALLOC_SECURE=1 ALLOCATORS=hsmalloc workloads/tools/callgrind_pairs.sh "$NATIVE" 3100000 ghost-cells
