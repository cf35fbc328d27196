#!/usr/bin/env python3
"""Instructions per malloc+free pair under each recorder configuration, counted by
callgrind (undisturbed by the other jobs on the machine).

    scripts/callgrind_recorder_pairs.py PAIRS CMD [ARGS...] -- NAME=LIB[:VAR=VALUE,...] ...

One argument of CMD holds a number in braces, {N}: each configuration runs twice, with
N and with 2N there, and the difference of the two runs' instruction counts over PAIRS
(the pairs the N more make) is the figure: start-up, the recorder's constructor and
its snapshot at exit cancel out. LIB is a libheapscope.so to preload, or `none`; the
first configuration is the baseline the others are compared with. e.g.

    scripts/callgrind_recorder_pairs.py 1001000 build/native/bin/hs-wl-row-arrays \\
        --rows 1000 --steps {1000} -- plain=none counts=build/native/lib/libheapscope.so
"""
import os
import re
import subprocess
import sys
import tempfile

from ab_configs import parse

USAGE = __doc__.strip().splitlines()[3].strip()


def instructions(command, env):
    with tempfile.TemporaryDirectory(prefix="hs-cg-") as tmp:
        res = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg",
                              *command], env=dict(env, HEAPSCOPE_OUTPUT_DIR=tmp),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if res.returncode != 0:
        sys.exit(f"callgrind_recorder_pairs: {command[0]} failed: {res.stderr[-400:]}")
    found = re.search(r"Collected : (\d+)", res.stderr)
    if not found:
        sys.exit("callgrind_recorder_pairs: no instruction count in valgrind's output")
    return int(found.group(1))


def main(argv):
    pairs, command, configs = parse(argv, USAGE, lambda: dict(os.environ))
    marked = [i for i, a in enumerate(command) if re.fullmatch(r"\{\d+\}", a)]
    if len(marked) != 1 or pairs <= 0:
        sys.exit(USAGE + "\n(one argument of CMD must be {N}, and PAIRS > 0)")
    n = int(command[marked[0]][1:-1])

    def scaled(k):
        return [str(n * k) if i == marked[0] else a for i, a in enumerate(command)]

    base = None
    print(f"instructions per pair ({pairs} pairs): {' '.join(command)}")
    for name, env in configs:
        per = (instructions(scaled(2), env) - instructions(scaled(1), env)) / pairs
        base = per if base is None else base
        print(f"{name:12s} {per:7.1f}  (+{per - base:.1f} over {configs[0][0]}, "
              f"{per / base:.3f}x)")


if __name__ == "__main__":
    main(sys.argv)
