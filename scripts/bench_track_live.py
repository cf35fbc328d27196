#!/usr/bin/env python3
"""Measure tracking mode (record --track) with many blocks live together: CPU time and
peak memory (max RSS) of a program holding 10^6 and 10^7 blocks of 48 B at once
(tests/programs/trk_many_live.c: N mallocs held, then N frees), plain and tracked, in
interleaved rounds; and what the profile says (blocks tracked, untracked, the
table's memory).

    HEAPSCOPE_NATIVE_DIR=$PWD/build/native PYTHONPATH=python \\
        python3 scripts/bench_track_live.py --rounds 3 [--update BENCHMARKS.md]

Prints the Markdown section; --update puts it between the bench:track-live markers.
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

from benchmarks_md import machine_sentence, publish, timed  # scripts/: beside this script

BEGIN, END = "<!-- bench:track-live:begin -->", "<!-- bench:track-live:end -->"
ROOT = Path(__file__).resolve().parent.parent
SIZE = 48


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--update", metavar="BENCHMARKS.md")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-track-"))
    exe = work / "trk_many_live"
    subprocess.run(["cc", "-O2", "-o", exe, ROOT / "tests/programs/trk_many_live.c"], check=True)
    counts = (1_000_000, 10_000_000)
    load_before = os.getloadavg()[0]
    runs = {}       # (n, mode) -> [(wall, cpu, rss)]
    seen = {}       # n -> tracking figures
    for _ in range(args.rounds):
        for n in counts:
            runs.setdefault((n, "plain"), []).append(timed([exe, n, SIZE]))
            out = work / f"rec-{n}"
            shutil.rmtree(out, ignore_errors=True)
            runs.setdefault((n, "track"), []).append(timed(
                [sys.executable, "-m", "heapscope", "record", "--track", "--no-symbolize", "-o", out,
                 "--", exe, n, SIZE]))
            from heapscope.profile import read_profile
            [path] = out.glob("*.hsp")
            t = read_profile(path).tracking
            row = next(s for s in t.stacks if s.size == SIZE)
            seen[n] = (row.life.allocs, row.life.live_at_peak, t.untracked, t.table_bytes)
    load_after = os.getloadavg()[0]
    m = machine.describe()
    out = [BEGIN, "",
           "| live blocks | plain CPU s | tracked CPU s | CPU × plain | plain max RSS MB | "
           "tracked max RSS MB | tracked / live at the peak / untracked | table MB |",
           "|---|---|---|---|---|---|---|---|"]
    for n in counts:
        plain, track = runs[(n, "plain")], runs[(n, "track")]
        ratios = [t[1] / p[1] for p, t in zip(plain, track)]
        lo, hi = stats.bootstrap_ci(ratios, np.median)
        allocs, at_peak, untracked, table = seen[n]
        out.append(f"| {n:,} | {np.median([p[1] for p in plain]):.2f} | "
                   f"{np.median([t[1] for t in track]):.2f} | {np.median(ratios):.2f} [{lo:.2f}, {hi:.2f}] | "
                   f"{np.median([p[2] for p in plain]):.0f} | {np.median([t[2] for t in track]):.0f} | "
                   f"{allocs:,} / {at_peak:,} / {untracked:,} | {table / 1e6:.0f} |")
    out += ["", f"{args.rounds} interleaved rounds, medians; CPU × plain: median of the per-round "
                f"ratios with a 95% bootstrap interval; the tracked run includes `heapscope record`'s "
                f"own start (about 0.04 s of CPU). " + machine_sentence(m, load_before, load_after)]
    publish(out, "bench_track_live.py", args.rounds, BEGIN, END, args.update)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
