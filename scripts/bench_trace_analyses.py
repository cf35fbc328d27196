#!/usr/bin/env python3
"""Measure heapscope's analyses of an event-trace recording against the program's own
run time and beside heaptrack_print: wall time, CPU and peak memory (max RSS, from
/usr/bin/time) of every command, in interleaved rounds (plain run, record, heaptrack,
then each command once per round), medians and 95% bootstrap intervals of the
per-round ratios to the plain run.

    HEAPSCOPE_NATIVE_DIR=$PWD/build/native PYTHONPATH=python \\
        python3 scripts/bench_trace_analyses.py --rounds 3 [--update BENCHMARKS.md]

The recording: `heapscope record --trace --sizes all -- hs-wl-cxx-churn` (about 12.7 M
allocations), made afresh every round with an empty symbol cache, so `record`'s time
after the program ends includes symbolizing every stack type from scratch. "after
exit" is measured from the workload's last line of output (its checksum, printed just
before it returns from main) to the end of `record`: an upper bound of the time
record takes once the program is gone. Prints the Markdown section; --update puts it
between the bench:trace markers of the file.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import need_venv  # noqa: E402  (re-runs under the venv when numpy is missing)
need_venv.reexec_in_venv()
import numpy as np

from heapscope.bench import machine, stats
from heapscope.native import program

from benchmarks_md import machine_sentence, publish, timed  # scripts/: beside this script

BEGIN, END = "<!-- bench:trace:begin -->", "<!-- bench:trace:end -->"
HS = [sys.executable, "-m", "heapscope"]


def record_round(exe, out: Path, env):
    """(wall, cpu, rss, seconds from the program's last line to record's end) of
    record --trace --sizes all, into a fresh directory and symbol cache."""
    shutil.rmtree(out, ignore_errors=True)
    cache = Path(tempfile.mkdtemp(prefix="bench-trace-cache-"))
    env = dict(env, HEAPSCOPE_CACHE_DIR=str(cache))
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        start = time.perf_counter()
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%U %S %M", "-o", t.name, *HS, "record",
                                 "--trace", "--sizes", "all", "-o", str(out), "--", str(exe)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        last = None
        for line in proc.stdout:
            if line.startswith("checksum"):
                last = time.perf_counter()
        rc = proc.wait()
        end = time.perf_counter()
        if rc != 0 or last is None:
            raise SystemExit(f"record failed ({rc})")
        user, sys_, rss = t.read().split()[-3:]
    shutil.rmtree(cache, ignore_errors=True)
    return end - start, float(user) + float(sys_), int(rss) / 1024, end - last


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--update", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    exe = program("hs-wl-cxx-churn")
    work = Path(tempfile.mkdtemp(prefix="bench-trace-"))
    env = dict(os.environ)
    load_before = os.getloadavg()[0]
    rows = {}          # name -> list of (wall, cpu, rss)

    def add(name, value):
        rows.setdefault(name, []).append(value)

    profile = None
    for r in range(args.rounds):
        add("plain run", timed([exe]))
        wall, cpu, rss, after = record_round(exe, work / "rec", env)
        add("record --trace --sizes all", (wall, cpu, rss))
        add("record: after the program's end", (after, float("nan"), float("nan")))
        [profile] = (work / "rec").glob("*.hsp")
        ht = work / f"heaptrack.{r}"
        add("heaptrack (record)", timed(["heaptrack", "-o", ht, exe]))
        [ht_file] = work.glob(f"heaptrack.{r}*")
        add("heaptrack_print", timed(["heaptrack_print", ht_file]))
        commands = [
            ("report", ["report", profile]),
            ("stacks --size all", ["stacks", profile, "--size", "all"]),
            ("callgraph --size all", ["callgraph", profile, "--size", "all"]),
            ("diff (the recording with itself)", ["diff", profile, profile]),
            ("export --format pprof", ["export", profile, "--format", "pprof", "-o", work / "p.pb.gz"]),
            ("export --format collapsed", ["export", profile, "--format", "collapsed", "-o", work / "c.txt"]),
            ("timeline", ["timeline", profile]),
            ("lifetimes (replays the trace)", ["lifetimes", profile]),
            ("lifetimes (replay kept)", ["lifetimes", profile]),
            ("temporaries (replay kept)", ["temporaries", profile]),
            ("peak (replay kept)", ["peak", profile]),
            ("leaks (replay kept)", ["leaks", profile]),
        ]
        for name, cmd in commands:
            add(name, timed([*HS, *cmd], env=env))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    load_after = os.getloadavg()[0]
    from heapscope.profile import read_profile
    p = read_profile(profile)
    allocations = sum(p.size_counts.values())
    size_mb = profile.stat().st_size / 1e6
    ht_mb = ht_file.stat().st_size / 1e6

    plain = [w for w, _, _ in rows["plain run"]]
    m = machine.describe()
    out = [BEGIN, "",
           f"Recording: `hs-wl-cxx-churn`, {allocations:,} allocations (and as many frees), "
           f"a {size_mb:.0f} MB profile ({ht_mb:.0f} MB for heaptrack's). {args.rounds} interleaved "
           f"rounds; medians; `× plain`: the median of the per-round ratios of wall time to the "
           f"plain run of the same round, with a 95% bootstrap interval.",
           "", "| step | wall s | × plain | CPU s | max RSS MB |", "|---|---|---|---|---|"]
    for name, values in rows.items():
        walls = [w for w, _, _ in values]
        cpus = [c for _, c, _ in values]
        rsss = [x for _, _, x in values]
        ratios = [w / b for w, b in zip(walls, plain)]
        lo, hi = stats.bootstrap_ci(ratios, np.median)
        cpu = "" if np.isnan(cpus).all() else f"{np.median(cpus):.2f}"
        rss = "" if np.isnan(rsss).all() else f"{np.median(rsss):.0f}"
        ratio = "1" if name == "plain run" else f"{np.median(ratios):.2f} [{lo:.2f}, {hi:.2f}]"
        out.append(f"| {name} | {np.median(walls):.2f} | {ratio} | {cpu} | {rss} |")
    out += ["", machine_sentence(m, load_before, load_after)]
    publish(out, "bench_trace_analyses.py", args.rounds, BEGIN, END, args.update)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
