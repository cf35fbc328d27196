#!/usr/bin/env python3
"""Stacks of every size on one program: interleaved rounds, CPU time against the plain run.

    scripts/bench_stacks.py [--lib LIB] ROUNDS -- CMD [ARGS...]

Configurations, each round in a rotated order after one warm-up round: plain; counts
(the recorder, no stacks); dwarf (HEAPSCOPE_STACK_SIZES=all: the unwind cache); libunwind
(the same with HEAPSCOPE_UNWIND_CACHE=0: libunwind's unw_backtrace for every stack);
fp (HEAPSCOPE_UNWIND=fp); heaptrack (Debian's, `heaptrack -o DIR CMD`: it records every
allocation's stack, with libunwind's unw_backtrace). CPU time is user + sys of the
command and every process it waited for (wait4), so heaptrack's interpreter counts.
Printed per configuration: the median CPU time, the ratio of medians to plain and the
median of the per-round ratios, each with a 95% percentile-bootstrap interval, and the
largest max RSS. LIB: libheapscope.so (default: `heapscope record --print-library`).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from ab_configs import environ_without_preload, measure, ratios

USAGE = "usage: scripts/bench_stacks.py [--lib LIB] ROUNDS -- CMD [ARGS...]"


def run(command, env):
    """(CPU seconds, max RSS KiB) of one run, its output thrown away."""
    return measure(command, env, "bench_stacks", quiet=True)


def configurations(lib, command, out):
    base = environ_without_preload()
    rec = dict(base, LD_PRELOAD=lib, HEAPSCOPE_OUTPUT_DIR=out, HEAPSCOPE_TIMELINE_MS="0")
    stacks = dict(rec, HEAPSCOPE_STACK_SIZES="all")
    heaptrack = shutil.which("heaptrack")
    if not heaptrack:
        sys.exit("bench_stacks: heaptrack is not installed: run scripts/setup.sh")
    return [
        ("plain", command, base),
        ("counts", command, rec),
        ("dwarf", command, stacks),
        ("libunwind", command, dict(stacks, HEAPSCOPE_UNWIND_CACHE="0")),
        ("fp", command, dict(stacks, HEAPSCOPE_UNWIND="fp")),
        ("heaptrack", [heaptrack, "-o", os.path.join(out, "heaptrack"), *command], base),
    ]


def main(argv):
    args = argv[1:]
    lib = None
    if args[:1] == ["--lib"] and len(args) > 1:
        lib, args = args[1], args[2:]
    if len(args) < 3 or args[1] != "--":
        sys.exit(USAGE)
    try:
        rounds = int(args[0])
    except ValueError:
        sys.exit(USAGE)
    command = args[2:]
    if lib is None:
        lib = subprocess.run([sys.executable, "-m", "heapscope", "record", "--print-library"],
                             capture_output=True, text=True, check=True).stdout.strip()
    out = tempfile.mkdtemp(prefix="hs-stacks-")
    try:
        configs = configurations(lib, command, out)
        for _, cmd, env in configs:
            run(cmd, env)
        cpu = {name: [] for name, _, _ in configs}
        rss = {name: 0 for name, _, _ in configs}
        for r in range(rounds):
            for name, cmd, env in configs[r % len(configs):] + configs[:r % len(configs)]:
                seconds, kib = run(cmd, env)
                cpu[name].append(seconds)
                rss[name] = max(rss[name], kib)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    base = cpu["plain"]
    print(f"{rounds} rounds: {' '.join(command)}")
    for name, _, _ in configs:
        mine = cpu[name]
        ratio, (lo, hi), per_round, (plo, phi) = ratios(mine, base)
        print(f"{name:10s} median {statistics.median(mine):7.3f} s  ratio {ratio:6.2f}x "
              f"[{lo:.2f}, {hi:.2f}]  per-round {per_round:6.2f}x "
              f"[{plo:.2f}, {phi:.2f}]  max RSS {rss[name] / 1024:.0f} MiB")


if __name__ == "__main__":
    main(sys.argv)
