#!/bin/sh
# Regenerate the MPI table of BENCHMARKS.md (the MPI layer's cost):
#  - small-message rate, hs-wl-mpi-msgrate with 8-byte messages:
#      on 2 ranks, one pair ping-ponging (MPI_Send/MPI_Recv): the rate over wall time,
#        what the issue's goal (>= 0.9x plain) is about; it needs both ranks running at
#        once, so it is only meaningful on an otherwise idle machine;
#      on 1 rank messaging itself (MPI_Isend, MPI_Recv, MPI_Wait): the rate over the
#        timing thread's CPU time, which a busy machine disturbs much less: the cost
#        the layer adds per MPI call;
#      and on 1 rank, N calls of MPI_Comm_rank (--null-calls): the bracket's ns per call;
#    each plainly, under the recorder alone (`heapscope record`), under the recorder
#    with the MPI layer (`heapscope record --mpi`, calipers at their default rate
#    limit), and with the calipers off (HEAPSCOPE_CALIPER_MS=off); median of RUNS
#    interleaved runs, ratio to plain;
#  - LAMMPS (Debian lammps + lammps-examples), examples/melt/in.melt on 4 ranks:
#    wall time of the whole command and LAMMPS's own "Loop time", plain and under
#    `heapscope record --mpi` (calipers on and off), medians of RUNS interleaved
#    runs, ratios.
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


def record(mpi, env=()):
    d = tempfile.mkdtemp(dir=work)
    return (["env", *env] if env else []) + HEAPSCOPE + ["record", "-o", d] + \
        (["--mpi"] if mpi else []) + ["--"]


CONFIGS = (("plain", lambda: []), ("recorder", lambda: record(False)),
           ("recorder + MPI layer", lambda: record(True)),
           ("recorder + MPI layer, calipers off", lambda: record(True, ["HEAPSCOPE_CALIPER_MS=off"])))
pair_cmd = MPIRUN + ["-np", "2", msgrate, "--messages", "500000"]
self_cmd = MPIRUN + ["-np", "1", msgrate, "--messages", "1000000", "--null-calls", "5000000"]
pair = {name: [] for name, _ in CONFIGS}
alone = {name: [] for name, _ in CONFIGS}
null_ns = {name: [] for name, _ in CONFIGS}
lammps = {"plain": [], "heapscope record --mpi": [], "heapscope record --mpi, calipers off": []}
lmp_cmd = MPIRUN + ["-np", "4", "lmp", "-in", MELT, "-log", "none"]
checks = {}
load = os.getloadavg()
for i in range(runs):            # interleaved: one run of every configuration per round
    for name, prefix in CONFIGS:
        for cmd, into, pattern in ((pair_cmd, pair, r"messages/s: (\d+)"),
                                   (self_cmd, alone, r"messages per CPU second: (\d+)")):
            text, _ = run(prefix() + cmd)
            into[name].append(float(re.search(pattern, text).group(1)))
            if cmd is self_cmd:
                null_ns[name].append(float(re.search(r"ns per MPI_Comm_rank: ([\d.]+)",
                                                     text).group(1)))
            checks.setdefault(cmd[4], set()).add(re.search(r"checksum: (\w+)", text).group(1))
    for name, prefix in (("plain", []), ("heapscope record --mpi", record(True)),
                         ("heapscope record --mpi, calipers off",
                          record(True, ["HEAPSCOPE_CALIPER_MS=off"]))):
        text, wall = run(prefix + lmp_cmd)
        loop = float(re.search(r"Loop time of ([\d.]+)", text).group(1))
        lammps[name].append((wall, loop))
shutil.rmtree(work, ignore_errors=True)
if any(len(c) != 1 for c in checks.values()):
    sys.exit(f"bench_mpi: msgrate checksums differ between configurations: {checks}")


def rate_table(title, rates, unit):
    med = {k: statistics.median(v) for k, v in rates.items()}
    rows = [title, "", f"| configuration | {unit} (median) | min | max | ratio to plain |",
            "|---|---:|---:|---:|---:|"]
    for k, v in rates.items():
        rows.append(f"| {k} | {med[k]:,.0f} | {min(v):,.0f} | {max(v):,.0f} | "
                    f"{med[k] / med['plain']:.3f} |")
    return rows


lines = rate_table(f"Small-message rate, 2 ranks ping-ponging 8-byte messages "
                   f"(`hs-wl-mpi-msgrate --messages 500000`), over wall time; median of {runs} "
                   f"interleaved runs (goal >= 0.9x plain with the MPI layer).", pair, "messages/s")
lines += [""] + rate_table(f"1 rank messaging itself (`hs-wl-mpi-msgrate --messages 1000000`, "
                           f"3 MPI calls per message), over the timing thread's CPU time; median "
                           f"of {runs} interleaved runs.", alone, "messages per CPU s")
nmed = {k: statistics.median(v) for k, v in null_ns.items()}
lines += ["", f"The bracket alone: `MPI_Comm_rank` (a call that does almost nothing) on 1 "
              f"rank, ns per call over the thread's CPU time, best of 5 rounds of 5,000,000 "
              f"calls per run; median of {runs} runs.", "",
          "| configuration | ns per call (median) | min | max | added to plain |",
          "|---|---:|---:|---:|---:|"]
for k, v in null_ns.items():
    lines.append(f"| {k} | {nmed[k]:.2f} | {min(v):.2f} | {max(v):.2f} | "
                 f"{nmed[k] - nmed['plain']:+.2f} |")
lw = {k: statistics.median(w for w, _ in v) for k, v in lammps.items()}
ll = {k: statistics.median(l for _, l in v) for k, v in lammps.items()}
lines += ["", f"LAMMPS `examples/melt/in.melt` (4000 atoms, 250 steps) on 4 ranks, median of "
              f"{runs} interleaved runs: wall time of the whole command (mpirun start-up "
              f"included) and LAMMPS's own loop time.", "",
          "| configuration | wall s | ratio | loop time s | ratio |", "|---|---:|---:|---:|---:|"]
for k in lammps:
    lines.append(f"| {k} | {lw[k]:.3f} | {lw[k] / lw['plain']:.3f} | {ll[k]:.3f} | "
                 f"{ll[k] / ll['plain']:.3f} |")
from heapscope.bench import machine
lines += ["", f"Machine: {machine.one_line(machine.describe())}"]
lines += ["", f"Regenerate: `scripts/bench_mpi.sh {runs}` ({os.cpu_count()} CPUs; 1-minute load "
              f"average {load[0]:.1f} before the runs, {os.getloadavg()[0]:.1f} after: a "
              f"ping-pong between two busy-polling ranks slows down many-fold when other "
              f"processes want the cores)."]
with open(os.path.join(out, "mpi.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
with open(os.path.join(out, "mpi.json"), "w") as f:
    json.dump(dict(runs=runs, msgrate_pair=pair, msgrate_self_cpu=alone, null_call_ns=null_ns,
                   lammps_wall_loop=lammps), f, indent=2)
print("\n".join(lines))
EOF
python3 scripts/bench_splice.py BENCHMARKS.md mpi "$OUT/mpi.md"
