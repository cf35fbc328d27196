#!/usr/bin/env python3
"""Time `heapscope stacks --size all` and `heapscope callgraph --size all --svg` on one
recording, this tree against an older revision (A/B, interleaved runs): wall and CPU
seconds (user + system of the command and its children, e.g. graphviz), medians, and
the ratio of mean CPU with a bootstrap interval (heapscope.bench.stats).

    python3 scripts/bench_analysis_speed.py RECORDING --base REV [--runs 5]

RECORDING: e.g. a Python run recorded with `heapscope record --sizes all -- python3
SCRIPT`. REV is exported with `git archive` (python/ and src/format/) into a temporary
directory. Symbols are cached before timing (one untimed run of each side).
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

import need_venv  # noqa: E402  (re-runs under the venv when numpy is missing)
need_venv.reexec_in_venv()
from heapscope.bench.stats import ratio  # noqa: E402


def export(rev: str) -> Path:
    out = Path(tempfile.mkdtemp(prefix="bench-analysis-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "python", "src/format"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out / "python"


def timed(pythonpath: Path, args, svg: Path):
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "heapscope", *args], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode not in (0, 1):   # the base's dot past its time bound, for one
        print(f"  {pythonpath}: {args[0]} failed after {wall:.0f} s: "
              f"{(res.stderr.strip().splitlines() or ['?'])[-1]}", flush=True)
        return None, None
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recording")
    ap.add_argument("--base", required=True, help="git revision to compare against")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", choices=("stacks", "callgraph"), help="time one command only")
    args = ap.parse_args()
    sides = {"base": export(args.base), "this": ROOT / "python"}
    svg = Path(tempfile.mkdtemp(prefix="bench-analysis-svg-")) / "g.svg"
    commands = {"stacks --size all": ["stacks", args.recording, "--size", "all"],
                "callgraph --size all --svg": ["callgraph", args.recording, "--size", "all",
                                               "--svg", str(svg)]}
    commands = {k: v for k, v in commands.items() if not args.only or k.startswith(args.only)}
    for path in sides.values():   # symbol cache warm, untimed
        timed(path, ["stacks", args.recording, "--size", "all"], svg)
    for name, cmd in commands.items():
        results = {side: ([], []) for side in sides}
        for _ in range(args.runs):
            for side, path in sides.items():      # interleaved: base, this, base, this ...
                wall, cpu = timed(path, cmd, svg)
                if wall is not None:
                    results[side][0].append(wall)
                    results[side][1].append(cpu)
        if not results["base"][1] or not results["this"][1]:
            done = {side: len(r[1]) for side, r in results.items()}
            this = results["this"]
            if this[1]:
                print(f"{name}: this median {statistics.median(this[0]):.2f} s wall, "
                      f"{statistics.median(this[1]):.2f} s CPU; runs finished: {done}")
            continue
        r = ratio(results["this"][1], results["base"][1])
        print(f"{name}: base median {statistics.median(results['base'][0]):.2f} s wall, "
              f"{statistics.median(results['base'][1]):.2f} s CPU; this median "
              f"{statistics.median(results['this'][0]):.2f} s wall, "
              f"{statistics.median(results['this'][1]):.2f} s CPU; CPU ratio {r.value:.3f} "
              f"[{r.ci[0]:.3f}, {r.ci[1]:.3f}] ({args.runs} interleaved runs each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
