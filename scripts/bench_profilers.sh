#!/bin/sh
# Regenerate the profiler-overhead table of BENCHMARKS.md (the recorder's overhead):
# the cxx-churn workload (~12.7 M allocations from C++ containers) run plainly, under
# each heapscope recording mode (counts only; stacks of the most frequent size;
# stacks of every size; tracking mode `record --track`; event trace `record --trace`,
# its writer thread's CPU included), heaptrack and Valgrind Massif; CPU-time and wall
# ratios to the plain run, interleaved, with bootstrap confidence intervals.
#
#   scripts/bench_profilers.sh [RUNS]           (default RUNS=10)
#
# Writes bench-results/profilers.{md,json,csv} and splices the Markdown between
#   <!-- bench:profilers:begin -->  and  <!-- bench:profilers:end -->
# in BENCHMARKS.md. Source-tree use as in scripts/bench_allocators.sh.
set -eu
cd "$(dirname "$0")/.."
RUNS=${1:-10}
OUT=bench-results
mkdir -p "$OUT"
export HEAPSCOPE_BENCH_REGENERATE="scripts/bench_profilers.sh $RUNS"
if [ -n "${HEAPSCOPE_NATIVE_DIR:-}" ]; then
    HEAPSCOPE="env PYTHONPATH=$PWD/python python3 -m heapscope"
    CHURN="$HEAPSCOPE_NATIVE_DIR/bin/hs-wl-cxx-churn"
else
    HEAPSCOPE=heapscope
    CHURN="$(python3 -c 'from heapscope.native import program; print(program("hs-wl-cxx-churn"))')"
fi
$HEAPSCOPE bench --profilers -n "$RUNS" --warmup 1 \
    --markdown "$OUT/profilers.md" --json "$OUT/profilers.json" --csv "$OUT/profilers.csv" \
    -- "$CHURN" || status=$?
python3 scripts/bench_splice.py BENCHMARKS.md profilers "$OUT/profilers.md"
exit "${status:-0}"
