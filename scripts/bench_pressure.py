#!/usr/bin/env python3
"""Benchmark of hsmalloc's adaptive return of memory (BENCHMARKS.md, "hsmalloc under
memory pressure"), on the phase-structured workload hs-wl-phases.

1. Without pressure: CPU time of the adaptive decay (the default) against the fixed one
   (HSMALLOC_PRESSURE=0), interleaved rounds, medians and the per-round ratio's range.
2. Under pressure: the program in a memory cgroup with a limit (v2 memory.max, or the v1
   memory controller's memory.limit_in_bytes; made as root under /sys/fs/cgroup), each
   phase's resident set against its live heap, for the adaptive decay, the fixed one
   and glibc.

usage: scripts/bench_pressure.py [--rounds 7] [--limit-mb 256] [--native DIR]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHASES = ["--phases", "8", "--mb", "192", "--keep", "10"]


def variants(native):
    lib = str(native / "lib" / "libhsmalloc.so")
    return {
        "hsmalloc adaptive": {"LD_PRELOAD": lib},
        "hsmalloc fixed decay": {"LD_PRELOAD": lib, "HSMALLOC_PRESSURE": "0"},
        "glibc": {},
    }


def run(exe, args, env, cgroup_procs=None):
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.update(env)

    def enter():
        if cgroup_procs:
            Path(cgroup_procs).write_text(str(os.getpid()))

    start = time.monotonic()
    proc = subprocess.Popen([str(exe), *args], stdout=subprocess.PIPE, text=True, env=full,
                            preexec_fn=enter)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    return out, os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, wall


def no_pressure(exe, native, rounds):
    names = ["hsmalloc adaptive", "hsmalloc fixed decay"]
    cpu = {n: [] for n in names}
    for _ in range(rounds):
        for name in names:
            _, rc, t, _ = run(exe, PHASES + ["--compute-ms", "0"], variants(native)[name])
            assert rc == 0, name
            cpu[name].append(t)
    ratios = [a / b for a, b in zip(cpu[names[0]], cpu[names[1]])]
    print(f"without pressure: hs-wl-phases {' '.join(PHASES)} --compute-ms 0, "
          f"{rounds} interleaved rounds, CPU s (user + sys)")
    print("| variant | CPU median (s) | min | max |")
    print("|---|---|---|---|")
    for name in names:
        print(f"| {name} | {statistics.median(cpu[name]):.3f} | {min(cpu[name]):.3f} | "
              f"{max(cpu[name]):.3f} |")
    print(f"adaptive / fixed: median {statistics.median(ratios):.3f}, "
          f"range {min(ratios):.3f}-{max(ratios):.3f}")


def make_cgroup(limit):
    v2 = Path("/sys/fs/cgroup/cgroup.controllers")
    if v2.exists() and "memory" in v2.read_text().split():
        d = Path("/sys/fs/cgroup/hs-bench-pressure")
        d.mkdir(exist_ok=True)
        (d / "memory.max").write_text(str(limit))
        return d, "cgroup v2 memory.max"
    d = Path("/sys/fs/cgroup/memory/hs-bench-pressure")
    d.mkdir(exist_ok=True)
    (d / "memory.limit_in_bytes").write_text(str(limit))
    return d, "cgroup v1 memory.limit_in_bytes"


def under_pressure(exe, native, limit_mb):
    limit = limit_mb << 20
    try:
        cg, kind = make_cgroup(limit)
    except OSError as exc:
        print(f"under pressure: skipped, no memory cgroup could be made ({exc.strerror}; run as root)")
        return
    print(f"\nunder pressure: {kind} = {limit_mb} MiB, hs-wl-phases {' '.join(PHASES)} "
          f"--compute-ms 300; per phase, after its frees and 300 ms of computing: "
          f"resident set (RSS) - live heap")
    print("| variant | exit | live MiB (median) | RSS - live, median MiB | max MiB | max RSS MiB |")
    print("|---|---|---|---|---|---|")
    try:
        for name, env in variants(native).items():
            out, rc, _, _ = run(exe, PHASES + ["--compute-ms", "300"], env, cg / "cgroup.procs")
            rows = [line.split() for line in out.splitlines() if line.startswith("phase")]
            live = [int(r[3]) / 1024 for r in rows]
            rss = [int(r[5]) / 1024 for r in rows]
            gaps = [r - lv for r, lv in zip(rss, live)]
            if not rows:
                print(f"| {name} | {rc} | - | - | - | - |")
                continue
            print(f"| {name} | {rc} | {statistics.median(live):.0f} | "
                  f"{statistics.median(gaps):.0f} | {max(gaps):.0f} | {max(rss):.0f} |")
    finally:
        for _ in range(50):
            try:
                cg.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--limit-mb", type=int, default=256)
    ap.add_argument("--native", default=os.environ.get("HEAPSCOPE_NATIVE_DIR", ROOT / "build" / "native"))
    args = ap.parse_args()
    native = Path(args.native)
    exe = native / "bin" / "hs-wl-phases"
    if not exe.exists():
        sys.exit(f"bench_pressure: {exe} is not built (cmake --build build)")
    no_pressure(exe, native, args.rounds)
    under_pressure(exe, native, args.limit_mb)


if __name__ == "__main__":
    main()
