#!/usr/bin/env python3
"""What the timeline costs (what decided its default): CPU time of hs-wl-cxx-churn
(~12.7 M allocations) run plainly, with the recorder counting only
(HEAPSCOPE_TIMELINE_MS=0), with the default timeline (RSS/PSS every 100 ms), and with
heap in use as well (HEAPSCOPE_TIMELINE_HEAP=1) at 100 ms and 10 ms.

    scripts/bench_timeline.py [ROUNDS]          (default 9; one warm-up round more)

Rounds are interleaved (A B C D E, A B C D E, ...); each run goes through hs-measure
(rusage of the child: user + system CPU time, max RSS). Prints the median CPU time of
each configuration and its ratio to the plain run and to counting only. Source-tree
use: PYTHONPATH=python HEAPSCOPE_NATIVE_DIR=build/native scripts/bench_timeline.py
"""
import os
import statistics
import subprocess
import sys
import tempfile

import need_venv  # noqa: E402  (re-runs under the venv when numpy is missing)
need_venv.reexec_in_venv()
from heapscope.native import library, program


def main() -> int:
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and not sys.argv[1].isdigit()):
        print("usage: scripts/bench_timeline.py [ROUNDS]  (a whole number, default 9)",
              file=sys.stderr)
        return 2
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    churn, measure = str(program("hs-wl-cxx-churn")), str(program("hs-measure"))
    lib = str(library("heapscope"))
    configs = {
        "plain": None,
        "counts": {"HEAPSCOPE_TIMELINE_MS": "0"},
        "timeline 100ms": {"HEAPSCOPE_TIMELINE_MS": "100"},
        "timeline 100ms + heap": {"HEAPSCOPE_TIMELINE_MS": "100", "HEAPSCOPE_TIMELINE_HEAP": "1"},
        "timeline 10ms + heap": {"HEAPSCOPE_TIMELINE_MS": "10", "HEAPSCOPE_TIMELINE_HEAP": "1"},
    }
    runs = {name: [] for name in configs}
    with tempfile.TemporaryDirectory() as out:
        for r in range(rounds + 1):
            for name, extra in configs.items():
                env = {k: v for k, v in os.environ.items()
                       if k != "LD_PRELOAD" and not k.startswith("HEAPSCOPE_")}
                if extra is not None:
                    env.update(extra, LD_PRELOAD=lib, HEAPSCOPE_OUTPUT_DIR=out)
                subprocess.run([measure, f"{out}/rusage", churn], env=env, check=True,
                               stdout=subprocess.DEVNULL)
                with open(f"{out}/rusage") as fh:
                    f = dict(kv.split("=", 1) for kv in fh.read().split())
                if r:   # round 0 warms the caches up
                    runs[name].append(((int(f["utime_us"]) + int(f["stime_us"])) / 1e6,
                                       int(f["maxrss_kib"])))
                for p in os.listdir(out):
                    if p.endswith(".hsp"):
                        os.unlink(os.path.join(out, p))
    plain = statistics.median(c for c, _ in runs["plain"])
    counts = statistics.median(c for c, _ in runs["counts"])
    print(f"hs-wl-cxx-churn, {rounds} interleaved rounds, median CPU s (user+sys)")
    for name, values in runs.items():
        med = statistics.median(c for c, _ in values)
        rss = statistics.median(m for _, m in values)
        print(f"  {name:<22} {med:6.3f} s  x{med / plain:.3f} plain  x{med / counts:.3f} counts  "
              f"max RSS {rss / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
