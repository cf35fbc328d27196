"""The job file's cost at MPI_Finalize, two recorder builds interleaved (A/B): each run
records PROGRAM on 4 ranks (Open MPI) with --per-rank none and the given record options,
and reads rank 0's summary_ns and reduce_ns from the job file it wrote. Prints the
medians and ranges per build, and the load average.

    python3 scripts/bench_job_finalize.py --a OLD/build/native --b build/native --runs 7 \\
        PROGRAM -- --track
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import need_venv  # noqa: E402  (re-runs under the venv when numpy is missing)
need_venv.reexec_in_venv()
from heapscope.profile.job_file import read_job_file  # noqa: E402


def run(native: str, program: str, options, ranks: int):
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "python"),
                   HEAPSCOPE_NATIVE_DIR=native)
        res = subprocess.run([sys.executable, "-m", "heapscope", "record", *options, "--per-rank",
                              "none", "-o", d + "/o", "--", "mpirun", "--oversubscribe",
                              "--allow-run-as-root", "-np", str(ranks), program],
                             env=env, capture_output=True, text=True)
        if res.returncode:
            sys.exit(f"record failed: {res.stderr.strip()[-300:]}")
        job = read_job_file(glob.glob(d + "/o/*.hsj")[0])
        return job.summary_ns / 1e6, job.reduce_ns / 1e6


def line(name, values) -> str:
    return f"{name} median {statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="native dir of build A (the baseline)")
    ap.add_argument("--b", required=True, help="native dir of build B")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("program")
    ap.add_argument("options", nargs="*", help="record options, after --")
    args = ap.parse_args()
    got = {"A": [], "B": []}
    for i in range(args.runs):   # interleaved, the order alternating
        for k in ("A", "B") if i % 2 == 0 else ("B", "A"):
            got[k].append(run(args.a if k == "A" else args.b, args.program, args.options, args.ranks))
    print("load average", " ".join(open("/proc/loadavg").read().split()[:3]))
    for k, v in got.items():
        s, r = [x for x, _ in v], [y for _, y in v]
        print(k, line("summary_ms", s), line("reduce_ms", r), line("total_ms", [x + y for x, y in v]))


if __name__ == "__main__":
    main()
