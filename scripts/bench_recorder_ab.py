#!/usr/bin/env python3
"""Compare recorder builds (or modes) on one command: interleaved rounds, CPU time.

    scripts/bench_recorder_ab.py ROUNDS CMD [ARGS...] -- NAME=LIB[:VAR=VALUE,...] ...

LIB is a libheapscope.so to preload, or `none` for the plain run (the first
configuration is the baseline). Every round runs each configuration once, in order,
after one warm-up round; each run's CPU time (user + sys, from wait4) is kept.
Printed per configuration: the median CPU time, the ratio of medians to the
baseline and the median of the per-round ratios (a round's runs are seconds apart,
so a slow patch of the machine affects both), each with a 95% percentile-bootstrap
interval (2000 resamples), and the fastest run. The profiles go to fresh temporary
directories. BENCHMARKS.md's counting before/after figures come from this script;
scripts/bench_profilers.sh writes the profiler table.
"""
import os
import statistics
import sys
import tempfile

from ab_configs import measure, parse, ratios


def cpu_seconds(command, env):
    return measure(command, env, "bench_recorder_ab")[0]


def main(argv):
    rounds, command, configs = parse(argv, __doc__.strip().splitlines()[2].strip(),
                                     lambda: dict(os.environ,
                                                  HEAPSCOPE_OUTPUT_DIR=tempfile.mkdtemp(prefix="hs-ab-")))
    for _, env in configs:
        cpu_seconds(command, env)
    runs = {name: [] for name, _ in configs}
    for _ in range(rounds):
        for name, env in configs:
            runs[name].append(cpu_seconds(command, env))
    base = runs[configs[0][0]]
    print(f"{rounds} rounds: {' '.join(command)}")
    for name, _ in configs:
        mine = runs[name]
        ratio, (lo, hi), per_round, (plo, phi) = ratios(mine, base)
        print(f"{name:12s} median {statistics.median(mine):.3f} s  ratio {ratio:.3f} "
              f"[{lo:.3f}, {hi:.3f}]  per-round {per_round:.3f} "
              f"[{plo:.3f}, {phi:.3f}]  fastest {min(mine):.3f} s")


if __name__ == "__main__":
    main(sys.argv)
