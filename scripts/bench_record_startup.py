#!/usr/bin/env python3
"""record's own fixed cost: CPU (user + sys, the recorded program's included) of
`heapscope record -o DIR -- true`, beside Python's own start (`python -c pass`), in
interleaved rounds; medians.

    scripts/bench_record_startup.py ROUNDS [NAME=PYTHON_DIR:NATIVE_DIR ...]

Without configurations: this checkout (python/ and build/native). A configuration names
another tree's python/ directory and its native/ directory (another build to compare
with). Byte-compiled files are written (PYTHONDONTWRITEBYTECODE unset) after one warm-up
round, as an installed package has them.
"""
import os
import shutil
import statistics
import sys
import tempfile

from ab_configs import measure  # scripts/: beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu(command, env):
    return measure(command, env, "bench_record_startup", quiet=True)[0]


def main(argv):
    if len(argv) < 2 or not argv[1].isdigit():
        sys.exit(__doc__.strip().splitlines()[4].strip())
    rounds = int(argv[1])
    configs = [("this tree", os.path.join(ROOT, "python"), os.path.join(ROOT, "build", "native"))]
    for spec in argv[2:]:
        name, _, dirs = spec.partition("=")
        py, _, native = dirs.partition(":")
        configs.append((name, py, native))
    base = {k: v for k, v in os.environ.items()
            if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("HEAPSCOPE_")}
    work = tempfile.mkdtemp(prefix="hs-startup-")
    runs = {name: [] for name, _, _ in configs}
    runs["python -c pass"] = []
    for r in range(rounds + 1):
        t = cpu([sys.executable, "-c", "pass"], base)
        if r:
            runs["python -c pass"].append(t)
        for name, py, native in configs:
            env = dict(base, PYTHONPATH=py, HEAPSCOPE_NATIVE_DIR=native)
            out = os.path.join(work, f"{r}-{name.replace(' ', '_')}")
            t = cpu([sys.executable, "-m", "heapscope", "record", "-o", out, "--", "/bin/true"], env)
            if r:
                runs[name].append(t)
    shutil.rmtree(work)
    print(f"{rounds} interleaved rounds, CPU medians (min):")
    for name, values in runs.items():
        print(f"  {name:20s} {statistics.median(values) * 1000:6.1f} ms ({min(values) * 1000:.1f})")


if __name__ == "__main__":
    main(sys.argv)
