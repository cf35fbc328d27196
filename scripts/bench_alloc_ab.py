#!/usr/bin/env python3
"""Compare allocator libraries (builds of one, or several) on one command: CPU and max RSS.

    scripts/bench_alloc_ab.py ROUNDS CMD [ARGS...] -- NAME=LIB[:VAR=VALUE,...] ...

LIB is a library to preload (`none`: glibc's malloc, no preload); the first
configuration is the baseline. Unlike `heapscope bench`, which runs the installed
allocators, this takes any library file, e.g. an allocator build before and after a
change. Every round runs each configuration once, in order, after one warm-up round;
each run's CPU time (user + sys) and maximum resident set come from wait4 (through
build/native/bin/hs-measure, or $HEAPSCOPE_NATIVE_DIR/bin/hs-measure). Printed per
configuration: the median CPU and max RSS with 95% percentile-bootstrap intervals
(2000 resamples), the ratios of medians to the baseline, and the load average before
and after.
"""
import os
import statistics
import subprocess
import sys
import tempfile

from ab_configs import environ_without_preload, interval, parse


# Linux keeps a process's peak RSS across execve: a command forked from Python would
# report Python's resident size as its own maximum, so it runs under the small
# launcher `heapscope bench` uses (workloads/tools/hs_measure.c).
MEASURE = os.path.abspath(os.path.join(os.environ.get("HEAPSCOPE_NATIVE_DIR", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "build", "native")), "bin", "hs-measure"))


def run(command, env):
    with tempfile.NamedTemporaryFile(prefix="hs-ab-", suffix=".txt") as usage:
        with open(os.devnull, "wb") as null:
            res = subprocess.run([MEASURE, usage.name, *command], env=env, stdout=null,
                                 stderr=null)
        fields = dict(kv.split("=") for kv in open(usage.name).read().split())
    if res.returncode != 0 or fields.get("status") != "0":
        sys.exit(f"bench_alloc_ab: {command[0]} failed ({fields or res.returncode})")
    cpu = (int(fields["utime_us"]) + int(fields["stime_us"])) / 1e6
    return cpu, int(fields["maxrss_kib"]) / 1024.0


def main():
    rounds, command, configs = parse(sys.argv, __doc__.strip().splitlines()[2].strip(),
                                     environ_without_preload)
    if not os.access(MEASURE, os.X_OK):
        sys.exit(f"bench_alloc_ab: {MEASURE} is missing (build the native parts, "
                 "or set HEAPSCOPE_NATIVE_DIR to a build's native/ directory)")
    load0 = os.getloadavg()
    results = {name: ([], []) for name, _ in configs}
    for r in range(rounds + 1):
        for name, env in configs:
            cpu, rss = run(command, env)
            if r > 0:
                results[name][0].append(cpu)
                results[name][1].append(rss)
    load1 = os.getloadavg()
    base_cpu = statistics.median(results[configs[0][0]][0])
    base_rss = statistics.median(results[configs[0][0]][1])
    print(f"{' '.join(command)}: {rounds} rounds, load average "
          f"{load0[0]:.1f} -> {load1[0]:.1f}")
    print(f"{'config':<10} {'CPU s median [95%]':<26} {'x base':>7} "
          f"{'max RSS MiB median [95%]':<28} {'x base':>7}")
    for name, _ in configs:
        cpu, rss = results[name]
        c, (clo, chi) = statistics.median(cpu), interval(cpu, statistics.median)
        m, (mlo, mhi) = statistics.median(rss), interval(rss, statistics.median)
        print(f"{name:<10} {c:7.3f} [{clo:.3f}, {chi:.3f}]     {c / base_cpu:7.2f} "
              f"{m:8.1f} [{mlo:.1f}, {mhi:.1f}]      {m / base_rss:7.3f}")


if __name__ == "__main__":
    main()
