#!/bin/sh
# Regenerate the allocator tables of BENCHMARKS.md: every bundled workload under
# glibc, jemalloc, tcmalloc, mimalloc and hsmalloc, interleaved, with bootstrap
# confidence intervals (heapscope bench), plus JSON, CSV and plots next to it.
#
#   scripts/bench_allocators.sh [RUNS]          (default RUNS=10)
#
# Writes bench-results/allocators.{md,json,csv} and bench-results/allocators-plots/,
# and replaces the text between the lines
#   <!-- bench:allocators:begin -->  and  <!-- bench:allocators:end -->
# in BENCHMARKS.md with the Markdown tables (if BENCHMARKS.md has those lines).
# Uses the installed `heapscope`, or the source tree when HEAPSCOPE_NATIVE_DIR is
# set (e.g. HEAPSCOPE_NATIVE_DIR=build/native scripts/bench_allocators.sh 5).
set -eu
cd "$(dirname "$0")/.."
RUNS=${1:-10}
OUT=bench-results
mkdir -p "$OUT"
export HEAPSCOPE_BENCH_REGENERATE="scripts/bench_allocators.sh $RUNS"
if [ -n "${HEAPSCOPE_NATIVE_DIR:-}" ]; then
    HEAPSCOPE="env PYTHONPATH=$PWD/python python3 -m heapscope"
else
    HEAPSCOPE=heapscope
fi
$HEAPSCOPE bench --workloads all -n "$RUNS" --warmup 1 \
    --markdown "$OUT/allocators.md" --format json -o "$OUT/allocators.json" \
    --csv "$OUT/allocators.csv" --plot "$OUT/allocators-plots" || status=$?
python3 scripts/bench_splice.py BENCHMARKS.md allocators "$OUT/allocators.md"
exit "${status:-0}"
