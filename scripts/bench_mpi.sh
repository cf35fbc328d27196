#!/bin/sh
# Regenerate the MPI table of BENCHMARKS.md (the MPI layer's cost), Open MPI and MPICH:
#  - halo exchange on 1 rank (hs-wl-mpi-halo --steps 300000: per step 2 MPI_Irecv,
#    2 MPI_Isend, MPI_Waitall, MPI_Allreduce of 8-byte messages): steps over the timing
#    thread's CPU time, which a busy machine disturbs much less than wall time;
#  - 1 rank messaging itself (hs-wl-mpi-msgrate --messages 1000000: MPI_Isend, MPI_Recv,
#    MPI_Wait per message), messages over the thread's CPU time; and MPI_Comm_rank, a
#    call that cannot allocate and has no wrapper (--null-calls): ns per call;
#  - a ping-pong on 2 ranks (hs-wl-mpi-msgrate --messages 300000, MPI_Send/MPI_Recv):
#    messages over wall time; both ranks must run at once, so only an idle 2-core
#    machine gives it meaning (the load is printed);
#  - LAMMPS (Debian lammps, Open MPI), examples/melt/in.melt under mpirun -np 2: its own
#    "Loop time".
# Each plainly, under the recorder alone (`heapscope record`), under the recorder with
# the MPI layer as shipped (`heapscope record --mpi`: calipers at 10 ms) and with the
# calipers off (HEAPSCOPE_CALIPER_MS=off); with BENCH_MPI_BASE=<native dir of another
# build> (its lib/ holds libheapscope*.so), also that build's recorder and layer ("base
# layer": the layer before a change), run by hand as record --mpi does. Every
# configuration once per round, RUNS rounds (interleaved); per configuration the median,
# and the ratio of means to plain over paired rounds with its 95% bootstrap interval.
# The MPICH programs are built here with mpicc.mpich (the workloads are Open MPI's).
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
import json, os, re, shutil, statistics, subprocess, sys, tempfile
from heapscope.bench import machine, stats
from heapscope.native import program

runs, out = int(sys.argv[1]), sys.argv[2]
HEAPSCOPE = [sys.executable, "-m", "heapscope"]
MELT = "/usr/share/lammps/examples/melt/in.melt"
work = tempfile.mkdtemp(prefix="hs-bench-mpi.")
src = os.path.abspath("workloads")
base = os.environ.get("BENCH_MPI_BASE")
if base and not os.path.exists(os.path.join(base, "lib", "libheapscope.so")):
    sys.exit(f"bench_mpi: BENCH_MPI_BASE={base}: no lib/libheapscope.so there")
FAMILIES = {
    "Open MPI": dict(run=["mpirun", "--oversubscribe", "--allow-run-as-root"], cc="mpicc",
                     layer="libheapscope_mpi.so",
                     halo=str(program("hs-wl-mpi-halo")), msgrate=str(program("hs-wl-mpi-msgrate"))),
    "MPICH": dict(run=["mpirun.mpich"], cc="mpicc.mpich", layer="libheapscope_mpich.so"),
}
for name in ("halo", "msgrate"):   # MPICH's builds of the workloads
    exe = os.path.join(work, f"{name}.mpich")
    # (-Wno-stringop-overflow: GCC 12 misreads MPICH's MPI_STATUSES_IGNORE as an empty array)
    subprocess.run(["mpicc.mpich", "-O2", "-Wno-stringop-overflow", "-I", f"{src}/common", "-o", exe,
                    f"{src}/c/mpi-{name}.c"], check=True)
    FAMILIES["MPICH"][name] = exe


def run(cmd, env=None):
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=work,
                         env=dict(os.environ, **(env or {})))
    if res.returncode != 0:
        sys.exit(f"bench_mpi: {' '.join(cmd)} failed ({res.returncode}): {res.stderr[-400:]}")
    return res.stdout


def configs(family):
    def record(*extra, env=None):
        def prefix():
            d = tempfile.mkdtemp(dir=work)
            return HEAPSCOPE + ["record", "-o", d, *extra, "--"], env
        return prefix

    out = [("plain", lambda: ([], None)), ("recorder", record()),
           ("recorder + MPI layer", record("--mpi")),
           ("recorder + MPI layer, calipers off", record("--mpi", env={"HEAPSCOPE_CALIPER_MS": "off"}))]
    if base:
        def by_hand():
            d = tempfile.mkdtemp(dir=work)
            lib = os.path.join(base, "lib")
            return [], {"LD_PRELOAD": f"{lib}/libheapscope.so {lib}/{family['layer']}",
                        "HEAPSCOPE_OUTPUT_DIR": d, "HEAPSCOPE_TIMELINE_HEAP": "1"}
        out.append(("base build's recorder + MPI layer", by_hand))
    return out


def value(text, pattern):
    return float(re.search(pattern, text).group(1))


results = {}          # (family, test) -> {config: [values by round]}
checks = {}
load = os.getloadavg()
for i in range(runs):            # interleaved: one run of every configuration per round
    for fam, f in FAMILIES.items():
        tests = (("halo", [*f["run"], "-np", "1", f["halo"], "--steps", "300000"],
                  r"steps per CPU second: (\d+)"),
                 ("self", [*f["run"], "-np", "1", f["msgrate"], "--messages", "1000000",
                           "--null-calls", "2000000"], r"messages per CPU second: (\d+)"),
                 ("pingpong", [*f["run"], "-np", "2", f["msgrate"], "--messages", "300000"],
                  r"messages/s: (\d+)"))
        for name, prefix in configs(f):
            for test, cmd, pattern in tests:
                pre, env = prefix()
                text = run(pre + cmd, env)
                results.setdefault((fam, test), {}).setdefault(name, []).append(value(text, pattern))
                checks.setdefault((fam, test), set()).add(re.search(r"checksum: (\w+)", text).group(1))
                if test == "self":
                    results.setdefault((fam, "null"), {}).setdefault(name, []).append(
                        value(text, r"ns per MPI_Comm_rank: ([\d.]+)"))
    for name, prefix in configs(FAMILIES["Open MPI"]):
        pre, env = prefix()
        text = run(pre + ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "2", "lmp",
                          "-in", MELT, "-log", "none"], env)
        results.setdefault(("Open MPI", "lammps"), {}).setdefault(name, []).append(
            value(text, r"Loop time of ([\d.]+)"))
shutil.rmtree(work, ignore_errors=True)
if any(len(c) != 1 for c in checks.values()):
    sys.exit(f"bench_mpi: checksums differ between configurations: {checks}")

TITLES = {
    "halo": ("halo exchange, 1 rank (`hs-wl-mpi-halo --steps 300000`: 2 Irecv, 2 Isend, "
             "Waitall, Allreduce of 8 bytes a step)", "steps per CPU s", "higher", 0.97),
    "self": ("1 rank messaging itself (`hs-wl-mpi-msgrate --messages 1000000`: Isend, Recv, "
             "Wait a message)", "messages per CPU s", "higher", 0.97),
    "pingpong": ("ping-pong, 2 ranks (`hs-wl-mpi-msgrate --messages 300000`: Send/Recv of "
                 "8 bytes), over wall time", "messages/s", "higher", 0.97),
    "null": ("`MPI_Comm_rank` (cannot allocate: no wrapper), ns per call over the thread's CPU "
             "time, best of 5 rounds of 2,000,000 calls", "ns per call", "lower", None),
    "lammps": ("LAMMPS `examples/melt/in.melt` (4000 atoms, 250 steps) under `mpirun -np 2`, "
               "its own Loop time", "loop time s", "lower", 1.03),
}
lines, doc = [], {}
for (fam, test), by in results.items():
    title, unit, better, goal = TITLES[test]
    goal_text = "" if goal is None else (f"; goal with the MPI layer as shipped: "
                                         f"{'>=' if better == 'higher' else '<='} {goal}x plain")
    lines += [f"{fam}: {title}; {runs} interleaved rounds{goal_text}.", "",
              f"| configuration | {unit} (median) | min | max | ratio of means to plain [95% interval] |",
              "|---|---:|---:|---:|---:|"]
    for name, v in by.items():
        r = stats.ratio_paired(v, by["plain"])
        fmt = (lambda x: f"{x:,.2f}") if max(v) < 100 else (lambda x: f"{x:,.0f}")
        lines.append(f"| {name} | {fmt(statistics.median(v))} | {fmt(min(v))} | {fmt(max(v))} | "
                     f"{r.value:.3f} [{r.ci[0]:.3f}, {r.ci[1]:.3f}] |")
    lines.append("")
    doc[f"{fam}/{test}"] = by
m = machine.describe()
lines += [f"Machine: {m['cpu']}, {m['cpus_usable']} of {m['cpus']} CPUs usable, {m['memory_gib']} GiB, "
          f"{m['os']}, Linux {m['kernel']}; Open MPI and MPICH from Debian.", "",
          f"Regenerate: `scripts/bench_mpi.sh {runs}`"
          + (" with BENCH_MPI_BASE set" if base else "")
          + f" ({os.cpu_count()} CPUs; 1-minute load average {load[0]:.1f} before the runs, "
          f"{os.getloadavg()[0]:.1f} after: a ping-pong between two busy-polling ranks slows down "
          f"many-fold when other processes want the cores)."]
with open(os.path.join(out, "mpi.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
with open(os.path.join(out, "mpi.json"), "w") as f:
    json.dump(dict(runs=runs, results=doc), f, indent=2)
print("\n".join(lines))
EOF
python3 scripts/bench_splice.py BENCHMARKS.md mpi "$OUT/mpi.md"
