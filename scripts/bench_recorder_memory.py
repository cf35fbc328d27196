#!/usr/bin/env python3
"""The recorder's own memory, measured apart from the program's (BENCHMARKS.md section
"The recorder's own memory"):

  1. real programs, plain and recorded: the program's largest RSS plain (wait4's max
     RSS of the process), and recorded with `heapscope record --track` (and
     `--track --sizes all`) at a 20 ms timeline interval: the program's sampled RSS
     peak (net of the recorder), the recorder's own peak, and the process's (their sum
     at the sample of the largest). Programs: GROMACS 2022 `gmx mdrun -nt 1` on a 2 nm
     box of SPC/E water, 100 steps (as scripts/bench_html_real.sh sets it up), and
     tests/programs/own_memory.c keeping 2,000,000 blocks of 24 bytes live;
  2. what measuring it costs: own_memory.c's hsr_own_resident, compiled here into a
     harness that lists anonymous mappings of known sizes (touched), timed fresh (every
     page read: the periodic samples) and cached (the cheap samples), median of 50.

  scripts/bench_recorder_memory.py [-o bench-results/recorder-memory.md]

Splices the Markdown between <!-- bench:recorder-memory:begin --> and
<!-- bench:recorder-memory:end --> in BENCHMARKS.md. From a source tree:
HEAPSCOPE_NATIVE_DIR=<build>/native and PYTHONPATH=python.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import need_venv  # noqa: E402  (re-runs under the venv when numpy is missing)
need_venv.reexec_in_venv()
from heapscope.bench import machine
from heapscope.profile import read_profile

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20
MDP = ROOT / "scripts" / "html_bench" / "gromacs_water.mdp"
HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include "timeline/own_memory.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
int main(int argc, char **argv) {
    size_t mb = atol(argv[1]); int maps = atoi(argv[2]);
    hsr_own_start();
    for (int m = 0; m < maps; m++) {
        size_t len = (mb << 20) / maps;
        char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        hsr_own_add(p, len);
        for (size_t i = 0; i < len; i += 4096) p[i] = 1;
    }
    for (int fresh = 1; fresh >= 0; fresh--) {
        double t[50]; long long r = 0;
        for (int i = 0; i < 50; i++) { double t0 = now(); r = hsr_own_resident(fresh); t[i] = now() - t0; }
        qsort(t, 50, sizeof *t, cmp);
        printf("%d %lld %.1f\n", fresh, r, t[25] * 1e6);
    }
    return 0;
}
"""


def max_rss_plain(cmd, cwd):
    """wait4's max RSS of cmd run plainly (bytes), and its stdout."""
    res = subprocess.run(["/usr/bin/time", "-f", "maxrss %M", *cmd], capture_output=True,
                         text=True, cwd=cwd, check=True)
    kb = int(re.search(r"maxrss (\d+)", res.stderr).group(1))
    return kb * 1024, res.stdout


def recorded(cmd, cwd, *options):
    """(program RSS peak, recorder peak, process at the program's peak sample) of the
    largest profile recording cmd."""
    out = Path(tempfile.mkdtemp(dir=cwd))
    subprocess.run([sys.executable, "-m", "heapscope", "record", *options, "--timeline-interval",
                    "20ms", "-o", out, "--", *cmd], capture_output=True, cwd=cwd, check=True)
    best = None
    for f in out.glob("*.hsp"):
        tl = read_profile(f).timeline
        if tl is None:
            continue
        top = max(tl.samples, key=lambda s: s.rss_bytes)
        own = max(s.recorder_bytes for s in tl.samples)
        if best is None or top.rss_bytes > best[0]:
            best = (top.rss_bytes, own, top.rss_bytes + top.recorder_bytes)
    shutil.rmtree(out, ignore_errors=True)
    return best


def real_programs(work):
    gmx = work / "gmx"
    gmx.mkdir()
    (gmx / "topol.top").write_text('#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spce.itp"\n'
                                   "[ system ]\nwater\n[ molecules ]\n")
    for step in (["gmx", "-quiet", "solvate", "-cs", "spc216.gro", "-box", "2", "2", "2", "-o",
                  "water.gro", "-p", "topol.top"],
                 ["gmx", "-quiet", "grompp", "-f", str(MDP), "-c", "water.gro", "-p", "topol.top",
                  "-o", "md.tpr"]):
        subprocess.run(step, capture_output=True, cwd=gmx, check=True)
    own = work / "own_memory"
    subprocess.run(["gcc", "-O0", "-o", own, ROOT / "tests" / "programs" / "own_memory.c"], check=True)
    cases = [("GROMACS `gmx mdrun -nt 1` (2 nm water, 100 steps)",
              ["gmx", "-quiet", "mdrun", "-s", "md.tpr", "-nt", "1", "-deffnm", "md"], gmx),
             ("own_memory.c, 2,000,000 blocks of 24 B live", [str(own), "2000000", "200"], work)]
    rows = []
    for name, cmd, cwd in cases:
        plain, _ = max_rss_plain(cmd, cwd)
        for options in (("--track",), ("--track", "--sizes", "all")):
            prog, rec, gross = recorded(cmd, cwd, *options)
            rows.append(f"| {name} | `record {' '.join(options)}` | {plain / MIB:.1f} | "
                        f"{prog / MIB:.1f} | {(prog - plain) / MIB:+.1f} | {rec / MIB:.1f} | "
                        f"{gross / MIB:.1f} |")
    return rows


def cost(work):
    exe = work / "ownbench"
    gen = next(ROOT.glob("build*/**/src/format/generated/profile_format_table.h"), None)
    if gen is None:
        sys.exit("bench_recorder_memory: no build tree with the generated format header")
    (work / "h.c").write_text(HARNESS)
    subprocess.run(["gcc", "-O2", "-I", ROOT / "src/recorder", "-I", ROOT / "src/format", "-I",
                    gen.parent, "-o", exe, work / "h.c", ROOT / "src/recorder/timeline/own_memory.c"],
                   check=True)
    rows = []
    for mb, maps in ((16, 4), (128, 8), (1024, 16), (64, 1000)):
        out = subprocess.run([exe, str(mb), str(maps)], capture_output=True, text=True,
                             check=True).stdout.split("\n")
        fresh, cached = (line.split() for line in out[:2])
        rows.append(f"| {mb} MiB in {maps} mappings, touched | {int(fresh[1]) / MIB:.1f} MiB | "
                    f"{float(fresh[2]):,.1f} | {float(cached[2]):,.1f} |")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", default="bench-results/recorder-memory.md")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hs-bench-own."))
    try:
        real = real_programs(work)
        costs = cost(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    m = machine.describe()
    lines = ["| program | recorded with | plain max RSS MiB | program's RSS peak recorded MiB | "
             "difference | recorder's own peak MiB | process (the two) MiB |",
             "|---|---|---:|---:|---:|---:|---:|", *real, "",
             "What a reading of the recorder's own memory costs (`hsr_own_resident`, median of 50):",
             "", "| the recorder's mappings | resident | fresh (periodic samples) us | cached "
             "(boundary, caliper samples) us |", "|---|---:|---:|---:|", *costs, "",
             f"Machine: {m['cpu']}, {m['cpus_usable']} of {m['cpus']} CPUs usable, "
             f"{m['memory_gib']} GiB, {m['os']}, Linux {m['kernel']}; 1-minute load average "
             f"{os.getloadavg()[0]:.1f} after the runs.", "",
             "Regenerate: `scripts/bench_recorder_memory.py`"]
    Path(args.o).parent.mkdir(parents=True, exist_ok=True)
    Path(args.o).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    subprocess.run([sys.executable, ROOT / "scripts" / "bench_splice.py", ROOT / "BENCHMARKS.md",
                    "recorder-memory", args.o], check=True)


if __name__ == "__main__":
    main()
