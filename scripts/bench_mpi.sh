#!/bin/sh
# Regenerate the MPI table of BENCHMARKS.md (issue 6's benchmark):
#  - small-message rate: hs-wl-mpi-msgrate (one pair of ranks ping-ponging 8-byte
#    messages, MPI_Send/MPI_Recv) plainly, under the recorder alone, and under the
#    recorder with the MPI layer (`heapscope record --mpi`); the rate the program
#    prints (messages/s), median of RUNS interleaved runs, ratio to plain (goal >= 0.9);
#  - LAMMPS (Debian lammps + lammps-examples), examples/melt/in.melt on 4 ranks:
#    wall time of the whole command and LAMMPS's own "Loop time", plain and under
#    `heapscope record --mpi`, medians of RUNS interleaved runs, ratios.
#
#   scripts/bench_mpi.sh [RUNS]           (default RUNS=10)
#
# Writes bench-results/mpi.{md,json} and splices the Markdown between
#   <!-- bench:mpi:begin -->  and  <!-- bench:mpi:end -->
# in BENCHMARKS.md. From a source tree: HEAPSCOPE_NATIVE_DIR=<build>/native (absolute).
set -eu
cd "$(dirname "$0")/.."
RUNS=${1:-10}
OUT=bench-results
mkdir -p "$OUT"
if [ -n "${HEAPSCOPE_NATIVE_DIR:-}" ]; then
    export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
fi
python3 - "$RUNS" "$OUT" <<'EOF'
import json, os, re, shutil, statistics, subprocess, sys, tempfile, time
from heapscope.native import program

runs, out = int(sys.argv[1]), sys.argv[2]
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root"]
HEAPSCOPE = [sys.executable, "-m", "heapscope"]
MELT = "/usr/share/lammps/examples/melt/in.melt"
msgrate = str(program("hs-wl-mpi-msgrate"))
work = tempfile.mkdtemp(prefix="hs-bench-mpi.")


def run(cmd):
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(f"bench_mpi: {' '.join(cmd)} failed ({res.returncode}): {res.stderr[-400:]}")
    return res.stdout, wall


def record(mpi, extra=()):
    d = tempfile.mkdtemp(dir=work)
    return HEAPSCOPE + ["record", "-o", d] + (["--mpi"] if mpi else []) + list(extra) + ["--"]


rate_cmd = MPIRUN + ["-np", "2", msgrate, "--messages", "500000"]
rates = {"plain": [], "recorder": [], "recorder + MPI layer": []}
lammps = {"plain": [], "heapscope record --mpi": []}
lmp_cmd = MPIRUN + ["-np", "4", "lmp", "-in", MELT, "-log", "none"]
checks = set()
load = os.getloadavg()
for i in range(runs):            # interleaved: one run of every configuration per round
    for name, prefix in (("plain", []), ("recorder", record(False)),
                         ("recorder + MPI layer", record(True))):
        text, _ = run(prefix + rate_cmd)
        rates[name].append(float(re.search(r"messages/s: (\d+)", text).group(1)))
        checks.add(re.search(r"checksum: (\w+)", text).group(1))
    for name, prefix in (("plain", []), ("heapscope record --mpi", record(True))):
        text, wall = run(prefix + lmp_cmd)
        loop = float(re.search(r"Loop time of ([\d.]+)", text).group(1))
        lammps[name].append((wall, loop))
shutil.rmtree(work, ignore_errors=True)
if len(checks) != 1:
    sys.exit(f"bench_mpi: msgrate checksums differ between configurations: {checks}")

med = {k: statistics.median(v) for k, v in rates.items()}
lines = [f"Small-message rate, `hs-wl-mpi-msgrate --messages 500000` on 2 ranks (one pair, "
         f"8-byte ping-pong); median of {runs} interleaved runs; ratio to plain (goal >= 0.9x "
         f"with the MPI layer).", "",
         "| configuration | messages/s (median) | min | max | ratio to plain |",
         "|---|---:|---:|---:|---:|"]
for k, v in rates.items():
    lines.append(f"| {k} | {med[k]:,.0f} | {min(v):,.0f} | {max(v):,.0f} | "
                 f"{med[k] / med['plain']:.3f} |")
lw = {k: statistics.median(w for w, _ in v) for k, v in lammps.items()}
ll = {k: statistics.median(l for _, l in v) for k, v in lammps.items()}
lines += ["", f"LAMMPS `examples/melt/in.melt` (4000 atoms, 250 steps) on 4 ranks, median of "
              f"{runs} interleaved runs: wall time of the whole command (mpirun start-up "
              f"included) and LAMMPS's own loop time.", "",
          "| configuration | wall s | ratio | loop time s | ratio |", "|---|---:|---:|---:|---:|"]
for k in lammps:
    lines.append(f"| {k} | {lw[k]:.3f} | {lw[k] / lw['plain']:.3f} | {ll[k]:.3f} | "
                 f"{ll[k] / ll['plain']:.3f} |")
lines += ["", f"Regenerate: `scripts/bench_mpi.sh {runs}` ({os.cpu_count()} CPUs; 1-minute load "
              f"average {load[0]:.1f} before the runs, {os.getloadavg()[0]:.1f} after: a "
              f"ping-pong between two busy-polling ranks slows down many-fold when other "
              f"processes want the cores)."]
with open(os.path.join(out, "mpi.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
with open(os.path.join(out, "mpi.json"), "w") as f:
    json.dump(dict(runs=runs, msgrate=rates, lammps_wall_loop=lammps), f, indent=2)
print("\n".join(lines))
EOF
python3 scripts/bench_splice.py BENCHMARKS.md mpi "$OUT/mpi.md"
