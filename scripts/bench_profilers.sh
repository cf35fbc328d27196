#!/bin/sh
# Regenerate the profiler-overhead table of BENCHMARKS.md: two C++ churns, cxx-churn
# (~12.7 M allocations from strings, vectors, maps, lists, shared_ptr) and map-churn
# (~30 M allocations: std::map<int, std::string> nodes, string buffers, plain
# new/delete), run plainly, under each heapscope recording mode (counts only; stacks
# of cxx-churn's most frequent size; stacks of every size; tracking mode `record
# --track`; event trace `record --trace`, its writer thread's CPU included),
# heaptrack and Valgrind Massif; CPU-time and wall ratios to the plain run,
# interleaved per workload, with bootstrap confidence intervals.
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
else
    HEAPSCOPE=heapscope
fi
$HEAPSCOPE bench --profilers -n "$RUNS" --warmup 1 --workloads cxx-churn,map-churn \
    --markdown "$OUT/profilers.md" --format json -o "$OUT/profilers.json" --csv "$OUT/profilers.csv" \
    || status=$?
python3 scripts/bench_splice.py BENCHMARKS.md profilers "$OUT/profilers.md"
exit "${status:-0}"
