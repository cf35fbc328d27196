#!/usr/bin/env python3
"""Custom pool against hsmalloc's chains and plain malloc on the mesh-refine workload
(BENCHMARKS.md, "Chains against an application's own pool").

    PYTHONPATH=python HEAPSCOPE_NATIVE_DIR=$PWD/build/native \
        python3 scripts/bench_chains.py [--runs N] [--threads 1,2] [--before LIB] [ARGS for the workload]

Every configuration is the same program and input with --pool 0 (new/delete), 1 (the
study's per-thread pool: pointer bump, recycling vector, batch release) or 2 (hsmalloc
chains, one per thread and type, released by hsmalloc_chain_destroy), under an
allocator; all configurations of one thread count run in rounds (each round every
configuration once, the order rotated by one each round, after a warm-up round),
through heapscope bench's runner (CPU and wall time from wait4). The workload's
arguments default to --rounds 128 (about 1.3 s of CPU a run: the default 32 rounds
take 0.3 s, too short for a few percent).
Prints a Markdown table per thread count: medians (CPU, its user and system parts,
minor page faults, wall), and the ratio of means to the custom
pool on the same allocator (hsmalloc) with its 95% bootstrap interval, the rounds
resampled as pairs (a load that changes between rounds changes both runs of a round),
and the load average before and after.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import need_venv  # noqa: E402  (re-runs under the venv when numpy is missing)
need_venv.reexec_in_venv()
from heapscope import allocators
from heapscope.bench import runner, stats
from heapscope.native import native_dir

# (label, --pool, allocator, environment)
CONFIGS = [
    ("custom pool, hsmalloc", 1, "hsmalloc", {}),
    ("chain + free-all, hsmalloc", 2, "hsmalloc", {}),
    ("new/delete, hsmalloc", 0, "hsmalloc", {}),
    ("custom pool, glibc", 1, "glibc", {}),
    ("new/delete, glibc", 0, "glibc", {}),
    ("new/delete, jemalloc", 0, "jemalloc", {}),
    ("new/delete, tcmalloc", 0, "tcmalloc", {}),
    ("new/delete, mimalloc", 0, "mimalloc", {}),
    # hsmalloc's plain malloc with its two locality features off, one and then both
    ("new/delete, hsmalloc, packed classes for new too", 0, "hsmalloc", {"HSMALLOC_PACKED": "all"}),
    # the program without its ELF .comment: its compiler unknown, new keeps 16-byte alignment
    ("new/delete, hsmalloc, new 16-byte aligned (.comment stripped)", 0, "hsmalloc", {}),
    ("new/delete, hsmalloc, no call-site lanes", 0, "hsmalloc", {"HSMALLOC_SITE_LANES": "0"}),
    ("new/delete, hsmalloc, no lanes, no packed classes", 0, "hsmalloc",
     {"HSMALLOC_SITE_LANES": "0", "HSMALLOC_PACKED": "0"}),
]
# the variants run only when --only names them
STRIPPED = "new/delete, hsmalloc, new 16-byte aligned (.comment stripped)"
OPTIONAL = {"new/delete, hsmalloc, packed classes for new too", STRIPPED,
            "new/delete, hsmalloc, no call-site lanes",
            "new/delete, hsmalloc, no lanes, no packed classes"}
BASELINE = "custom pool, hsmalloc"


def run_rotated(labels, runs, run_one):
    """A warm-up round, then `runs` rounds of every configuration, the order rotated by one
    each round (no configuration always follows the same one). Returns an Outcome per
    label whose runs[i] is round i's, or a failure that drops the label."""
    out = {label: runner.Outcome() for label in labels}
    for r in range(runs + 1):
        for label in labels[r % len(labels):] + labels[:r % len(labels)]:
            outcome = out[label]
            if outcome.failed:
                continue
            m = run_one(label)
            if not m.ok:
                outcome.failure = m
                outcome.runs = []
                continue
            (outcome.runs if r > 0 else outcome.warmups).append(m)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--only", help="labels of the configurations to run, separated by ;")
    parser.add_argument("--before", metavar="LIB",
                        help="another libhsmalloc.so (an earlier build): its pool, chain and "
                             "new/delete rows run interleaved with the others, labelled 'before'")
    parser.add_argument("args", nargs="*",
                        help="more arguments for hs-wl-mesh-refine (default: --rounds 128)")
    opts = parser.parse_args()
    if opts.runs < 2:
        sys.exit("bench_chains: --runs must be at least 2")
    if not opts.args:
        opts.args = ["--rounds", "128"]
    configs = list(CONFIGS)
    if opts.before:
        if not os.path.isfile(opts.before):
            sys.exit(f"bench_chains: --before {opts.before}: no such file")
        configs += [("custom pool, hsmalloc before", 1, "before", {}),
                    ("chain + free-all, hsmalloc before", 2, "before", {}),
                    ("new/delete, hsmalloc before", 0, "before", {})]
    program = str(native_dir() / "bin" / "hs-wl-mesh-refine")
    preload = {"before": opts.before} if opts.before else {}
    for label, _, name, _ in configs:
        if opts.only and label not in opts.only.split(";") and label != BASELINE:
            continue
        if name != "glibc" and name not in preload:
            path = allocators.find_allocator(name)
            if path is None:
                sys.exit(f"bench_chains: {name} is not installed")
            preload[name] = str(path)
    base_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    stripped = os.path.join(tempfile.mkdtemp(prefix="bench_chains"), "hs-wl-mesh-refine")
    if opts.only and STRIPPED in opts.only.split(";"):
        shutil.copy(program, stripped)
        subprocess.run(["objcopy", "--remove-section=.comment", stripped], check=True)
    for threads in [int(t) for t in opts.threads.split(",")]:
        wanted = set(opts.only.split(";")) if opts.only else None
        table = {label: (pool, name, extra) for label, pool, name, extra in configs
                 if (wanted is None and label not in OPTIONAL)
                 or (wanted is not None and label in wanted) or label == BASELINE
                 or name == "before"}

        def run_one(label):
            pool, name, extra = table[label]
            env = dict(base_env, **extra)
            if name in preload:
                env["LD_PRELOAD"] = preload[name]
            argv = [stripped if label == STRIPPED else program, "--threads", str(threads), "--pool", str(pool), *opts.args]
            return runner.measure(argv, env, timeout=600)

        load0 = os.getloadavg()[0]
        out = run_rotated(list(table), opts.runs, run_one)
        load1 = os.getloadavg()[0]
        sums = {label: {m.checksum for m in o.runs} for label, o in out.items() if o.runs}
        if len(set().union(*sums.values())) != 1:
            sys.exit(f"bench_chains: checksums differ: {sums}")
        if out[BASELINE].failed:
            sys.exit(f"bench_chains: {BASELINE}: {out[BASELINE].failure.failure_text().splitlines()[0]}")
        base = out[BASELINE].runs
        print(f"\n{threads} thread(s), {opts.runs} rounds of every configuration, order rotated "
              f"(hs-wl-mesh-refine --threads {threads} {' '.join(opts.args)}); "
              f"load average {load0:.1f} before, {load1:.1f} after\n")
        print("| configuration | CPU s, median | user s | sys s | minor faults | wall s, median "
              "| CPU / custom pool on hsmalloc (95% CI) | user / pool (95% CI) "
              "| wall / custom pool on hsmalloc (95% CI) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for label, outcome in out.items():
            if outcome.failed:
                print(f"| {label} | failed: {outcome.failure.failure_text().splitlines()[0]} | | | | | | | |")
                continue
            cpu = [m.cpu for m in outcome.runs]
            wall = [m.wall for m in outcome.runs]
            rc = stats.ratio_paired(cpu, [m.cpu for m in base])
            rw = stats.ratio_paired(wall, [m.wall for m in base])
            ru = stats.ratio_paired([m.user for m in outcome.runs], [m.user for m in base])
            user = stats.median([m.user for m in outcome.runs])
            system = stats.median([m.sys for m in outcome.runs])
            faults = stats.median([m.minflt for m in outcome.runs])
            print(f"| {label} | {stats.median(cpu):.3f} | {user:.3f} | {system:.3f} | {faults:.0f} "
                  f"| {stats.median(wall):.3f} "
                  f"| {rc.value:.3f} ({rc.ci[0]:.3f}–{rc.ci[1]:.3f}) "
                  f"| {ru.value:.3f} ({ru.ci[0]:.3f}–{ru.ci[1]:.3f}) "
                  f"| {rw.value:.3f} ({rw.ci[0]:.3f}–{rw.ci[1]:.3f}) |")


if __name__ == "__main__":
    main()
