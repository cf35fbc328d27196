#!/usr/bin/env python3
"""mimalloc-bench's in-repo programs under glibc, jemalloc, tcmalloc, mimalloc and hsmalloc.

    scripts/bench_mimalloc_suite.py CHECKOUT [--rounds N] [--warmup N] [--procs N] [--only ROW,...]
        [--build DIR] [--hsmalloc LIB] [--no-secure] [--json FILE] [--markdown FILE]

CHECKOUT is a checkout of https://github.com/daanx/mimalloc-bench (only its bench/
directory is read). The programs are built with CMake into DIR (default
/tmp/hs-mimalloc-bench) from a CMakeLists.txt written there that names the suite's own
sources with the flags of the suite's bench/CMakeLists.txt: the suite's build script,
which downloads the allocators and the outside benchmarks, is not used, and none of the
suite's code is copied. The peers are Debian's libjemalloc2, libtcmalloc-minimal4 and
libmimalloc2.0 (LD_PRELOAD), hsmalloc is LIB (default $HEAPSCOPE_NATIVE_DIR/lib/
libhsmalloc.so or build/native/lib/libhsmalloc.so), and "hsmalloc-secure" is the same
library with HSMALLOC_SECURE=1.

Every round runs each row under every allocator, the allocators in an order rotated
each round (so a load that drifts over the round is spread over all of them), after
--warmup rounds (default 1) that are not counted. --markdown and --json are written
after every round, so a run stopped early keeps the rounds it finished. The rows and
their arguments are bench.sh's with its -j set to --procs (default: the machine's
cores). A row's time is the suite's own: the elapsed time,
except for the programs that run for a fixed time and print their throughput (larson,
xmalloc-test, rptest, glibc-thread), whose time is the suite's "relative time" derived
from it. Max RSS and minor faults come from wait4 (build/native/bin/hs-measure).

With --metric cpu (for a machine shared with other jobs) a row's time is the CPU time
of its work instead: the CPU seconds of a fixed-work program, and for a fixed-duration
one its relative time times the share of the CPUs it had (CPU seconds / elapsed), which
a load from other processes leaves alone.

Printed: per row and allocator the median time and max RSS; the ratio of each median
to the row's best (the smallest of the five allocators); hsmalloc's ratio to the best
of the four peers with a 95% interval from the rounds resampled in pairs
(bench.stats.ratio_paired: a round's load moves both); the geometric means of the
ratios; and secure hsmalloc against plain hsmalloc. --json writes every run.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "scripts"))  # need_venv, also when a test imports this file
import need_venv  # noqa: E402  (re-runs under the venv when numpy is missing)
need_venv.reexec_in_venv()
from heapscope.bench import stats  # noqa: E402

# absolute: the rows run in the programs' directory, where a relative path means nothing
NATIVE = Path(os.environ.get("HEAPSCOPE_NATIVE_DIR", ROOT / "build" / "native")).absolute()
MEASURE = NATIVE / "bin" / "hs-measure"
PEER_LIBS = {
    "jemalloc": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
    "tcmalloc": "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
    "mimalloc": "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2",
}
PEERS = ["glibc", "jemalloc", "tcmalloc", "mimalloc"]
FIVE = PEERS + ["hsmalloc"]

# The suite's bench/CMakeLists.txt, for the in-repo programs only (shbench and the
# others are downloaded by its build script). @B@ is CHECKOUT/bench.
CMAKE = r"""cmake_minimum_required(VERSION 3.5)
project(hs_mimalloc_bench CXX C)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_BUILD_TYPE Release)
set(B "@B@")
set(FLAGS " -w -Wno-implicit-function-declaration -Wno-implicit-int -Wno-int-conversion -Wno-return-mismatch -Wno-incompatible-pointer-types")
string(APPEND CMAKE_C_FLAGS ${FLAGS})
string(APPEND CMAKE_CXX_FLAGS ${FLAGS})
function(bench name)
  list(TRANSFORM ARGN PREPEND "${B}/")
  add_executable(${name} ${ARGN})
endfunction()
set(cfrac_names cfrac.c pops.c pconst.c pio.c pabs.c pneg.c pcmp.c podd.c phalf.c padd.c
    psub.c pmul.c pdivmod.c psqrt.c ppowmod.c atop.c ptoa.c itop.c utop.c ptou.c errorp.c
    pfloat.c pidiv.c pimod.c picmp.c primes.c pcfrac.c pgcd.c)
list(TRANSFORM cfrac_names PREPEND "cfrac/")
bench(cfrac ${cfrac_names})
target_compile_options(cfrac PRIVATE $<$<C_COMPILER_ID:GNU>:-std=gnu89>)
target_compile_definitions(cfrac PRIVATE NOMEMOPT=1)
target_link_libraries(cfrac m)
set(espresso_names cofactor.c cols.c compl.c contain.c cubestr.c cvrin.c cvrm.c cvrmisc.c
    cvrout.c dominate.c equiv.c espresso.c essen.c exact.c expand.c gasp.c getopt.c gimpel.c
    globals.c hack.c indep.c irred.c main.c map.c matrix.c mincov.c opo.c pair.c part.c
    primes.c reduce.c rows.c set.c setc.c sharp.c sminterf.c solution.c sparse.c unate.c
    utility.c verify.c)
list(TRANSFORM espresso_names PREPEND "espresso/")
bench(espresso ${espresso_names})
target_compile_options(espresso PRIVATE $<$<C_COMPILER_ID:GNU>:-std=gnu89>)
target_link_libraries(espresso m)
set(barnes_names code.c code_io.c load.c grav.c getparam.c util.c)
list(TRANSFORM barnes_names PREPEND "barnes/")
bench(barnes ${barnes_names})
target_compile_options(barnes PRIVATE $<$<C_COMPILER_ID:GNU>:-std=gnu89>)
target_link_libraries(barnes m)
bench(larson larson/larson.cpp)
target_compile_options(larson PRIVATE -Wno-unused-result)
target_compile_definitions(larson PRIVATE CPP=1)
target_link_libraries(larson pthread)
bench(larson-sized larson/larson.cpp)
target_compile_options(larson-sized PRIVATE -Wno-unused-result -fsized-deallocation)
target_compile_definitions(larson-sized PRIVATE CPP=1 SIZED=1)
target_link_libraries(larson-sized pthread)
bench(alloc-test alloc-test/test_common.cpp alloc-test/allocator_tester.cpp)
target_compile_definitions(alloc-test PRIVATE BENCH=4)
target_link_libraries(alloc-test pthread)
bench(cache-scratch cache-scratch/cache-scratch.cpp)
target_link_libraries(cache-scratch pthread)
bench(cache-thrash cache-thrash/cache-thrash.cpp)
target_link_libraries(cache-thrash pthread)
bench(xmalloc-test xmalloc-test/xmalloc-test.c)
target_link_libraries(xmalloc-test pthread)
bench(malloc-large malloc-large/malloc-large.cpp)
target_link_libraries(malloc-large pthread)
bench(mstress mstress/mstress.c)
target_link_libraries(mstress pthread)
bench(mleak mleak/mleak.c)
target_link_libraries(mleak pthread)
bench(rptest rptest/rptest.c rptest/thread.c rptest/timer.c)
target_compile_options(rptest PRIVATE -fpermissive)
target_include_directories(rptest PRIVATE ${B}/rptest)
target_link_libraries(rptest pthread m)
bench(glibc-simple glibc-bench/bench-malloc-simple.c)
target_link_libraries(glibc-simple pthread)
bench(glibc-thread glibc-bench/bench-malloc-thread.c)
target_link_libraries(glibc-thread pthread)
"""


def relative(pattern, scale):
    """The suite's relative time of a fixed-duration program: scale / its throughput."""
    rx = re.compile(pattern)

    def parse(out):
        m = rx.search(out)
        if m is None:
            return None
        return scale / float(m.group(1)) if scale else float(m.group(1))
    return parse


def rows(procs, bench):
    """(row, program, arguments, stdin file or None, output parser or None: elapsed)."""
    larson = relative(r" time: ([0-9.]+)", 0)
    cthrash = ["1000", "1", "2000000", str(procs)]
    return [
        ("cfrac", "cfrac", ["17545186520507317056371138836327483792789528"], None, None),
        ("espresso", "espresso", [str(bench / "espresso" / "largest.espresso")], None, None),
        ("barnes", "barnes", [], bench / "barnes" / "input", None),
        ("larsonN", "larson", ["5", "8", "1000", "5000", "100", "4141", str(procs)], None, larson),
        ("larsonN-sized", "larson-sized", ["5", "8", "1000", "5000", "100", "4141", str(procs)],
         None, larson),
        ("alloc-test1", "alloc-test", ["1"], None, None),
        ("alloc-testN", "alloc-test", [str(min(procs, 16))], None, None),
        ("xmalloc-testN", "xmalloc-test", ["-w", str(procs), "-t", "5", "-s", "64"], None,
         relative(r"rtime: ([0-9.]+)", 0)),
        ("cache-thrash1", "cache-thrash", ["1"] + cthrash, None, None),
        ("cache-thrashN", "cache-thrash", [str(procs)] + cthrash, None, None),
        ("cache-scratch1", "cache-scratch", ["1"] + cthrash, None, None),
        ("cache-scratchN", "cache-scratch", [str(procs)] + cthrash, None, None),
        ("malloc-large", "malloc-large", [], None, None),
        ("mstressN", "mstress", [str(procs), "50", "25"], None, None),
        ("mleak10", "mleak", ["5"], None, None),
        ("mleak100", "mleak", ["50"], None, None),
        ("rptestN", "rptest", [str(procs), "0", "1", "2", "500", "1000", "100", "8", "16000"],
         None, relative(r"\.\.\.([0-9]+) memory ops", 2000000.0)),
        ("glibc-simple", "glibc-simple", [], None, None),
        ("glibc-thread", "glibc-thread", [str(procs)], None,
         relative(r"^\s*([0-9.]+)", 1e9)),
    ]


def build(checkout, build_dir, targets=()):
    """The suite's programs (only `targets` when given) built into build_dir/out."""
    bench = Path(checkout).resolve() / "bench"
    if not (bench / "larson" / "larson.cpp").is_file():
        sys.exit(f"bench_mimalloc_suite: {checkout} is not a mimalloc-bench checkout "
                 "(no bench/larson/larson.cpp)")
    src = build_dir / "src"
    src.mkdir(parents=True, exist_ok=True)
    (src / "CMakeLists.txt").write_text(CMAKE.replace("@B@", str(bench)))
    for cmd in (["cmake", "-S", str(src), "-B", str(build_dir / "out")],
                ["cmake", "--build", str(build_dir / "out"), "-j", "2",
                 *(["--target", *targets] if targets else [])]):
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if res.returncode != 0:
            sys.exit(f"bench_mimalloc_suite: {' '.join(cmd[:2])} failed:\n{res.stdout[-3000:]}")
    return bench, build_dir / "out"


def print_commands(checkout, build_dir, only):
    """--build-only: the rows' programs built, their commands printed (other scripts run
    them: scripts/bench_access.sh)."""
    wanted = [r for r in only.split(",") if r]
    if not wanted:
        sys.exit("bench_mimalloc_suite: --build-only needs --only ROW,...")
    known = {r[0]: r for r in rows(1, Path(checkout).resolve() / "bench")}
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        sys.exit(f"bench_mimalloc_suite: unknown rows: {', '.join(unknown)}")
    chosen = [known[w] for w in wanted]
    if any(r[3] for r in chosen):
        sys.exit("bench_mimalloc_suite: --build-only: rows that read stdin are not printed")
    _, exe_dir = build(checkout, build_dir, sorted({r[1] for r in chosen}))
    for row, program, args, _, _ in chosen:
        print(row, exe_dir / program, *args)


def configs(hsmalloc, secure, also):
    base = {k: v for k, v in os.environ.items()
            if k != "LD_PRELOAD" and not k.startswith(("HSMALLOC_", "MIMALLOC_", "MALLOC_"))}
    out = [("glibc", dict(base))]
    for name, lib in PEER_LIBS.items():
        if not os.path.exists(lib):
            sys.exit(f"bench_mimalloc_suite: {lib} is missing (install the Debian package)")
        out.append((name, dict(base, LD_PRELOAD=lib)))
    if not os.path.exists(hsmalloc):
        sys.exit(f"bench_mimalloc_suite: {hsmalloc} is missing (build the native parts)")
    out.append(("hsmalloc", dict(base, LD_PRELOAD=hsmalloc)))
    if secure:
        out.append(("hsmalloc-secure", dict(base, LD_PRELOAD=hsmalloc, HSMALLOC_SECURE="1")))
    for spec in also:  # NAME=LIB[:VAR=VALUE,...]: another build to compare
        name, _, rest = spec.partition("=")
        lib, _, settings = rest.partition(":")
        if not name or not os.path.exists(lib):
            sys.exit(f"bench_mimalloc_suite: --also {spec}: expected NAME=LIB[:VAR=VALUE,...] "
                     "with an existing LIB")
        env = dict(base, LD_PRELOAD=lib)
        env.update(kv.split("=", 1) for kv in settings.split(",") if "=" in kv)
        out.append((name, env))
    return out


def run_one(exe_dir, row, env):
    name, prog, args, stdin, parse = row
    with tempfile.NamedTemporaryFile(prefix="hs-mb-", suffix=".txt") as usage, \
            tempfile.TemporaryFile() as out:
        with open(stdin or os.devnull, "rb") as inp:
            t0 = time.monotonic()
            res = subprocess.run([str(MEASURE), usage.name, str(exe_dir / prog), *args],
                                 env=env, stdin=inp, stdout=out, stderr=subprocess.STDOUT,
                                 cwd=exe_dir)
            wall = time.monotonic() - t0
        out.seek(0)
        text = out.read().decode(errors="replace")
        fields = dict(kv.split("=") for kv in Path(usage.name).read_text().split())
    if res.returncode != 0 or fields.get("status") != "0":
        return {"error": f"{name} failed (status {fields.get('status', res.returncode)}): "
                         f"{text.strip()[-300:]}"}
    value = parse(text) if parse else wall
    if value is None:
        return {"error": f"{name}: no figure in its output: {text.strip()[-300:]}"}
    cpu = (int(fields["utime_us"]) + int(fields["stime_us"])) / 1e6
    # the CPU time of the same work: the CPU seconds of a fixed-work program; for a
    # fixed-duration one, its relative time scaled by the share of the CPUs it had
    # (relative time x CPU / elapsed), which a load from other processes leaves alone
    return {"time": value, "wall": wall, "cpu": cpu,
            "cpu_work": value * cpu / wall if parse else cpu,
            "rss_mib": int(fields["maxrss_kib"]) / 1024.0, "minflt": int(fields["minflt"])}


def geomean(values):
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def table(results, names, metric):
    """Markdown rows of `metric`, and per allocator the ratios to the row's best."""
    lines, ratios = [], {n: [] for n in names}
    five = [n for n in FIVE if n in names]
    if "hsmalloc" not in five or not any(n in PEERS for n in five):
        # --allocators without a peer (or without hsmalloc): no row has a best peer
        return ["(no table against the peers: --allocators ran " +
                (", ".join(five) or "none of them") + ")"], ratios
    head = " | ".join(names)
    unit = "MiB" if metric == "rss_mib" else "s"
    lines.append(f"| row | {head} | best | hsmalloc / best peer [95%] |")
    lines.append("|---" * (len(names) + 3) + "|")
    for row, per in results.items():
        med = {n: stats.median([r[metric] for r in per[n]]) for n in names if per.get(n)}
        if any(n not in med for n in five):
            continue
        best = min(five, key=lambda n: med[n])
        peer = min([n for n in PEERS if n in med], key=lambda n: med[n])
        for n in names:
            ratios[n].append(med[n] / med[best])
        paired = stats.ratio_paired([r[metric] for r in per["hsmalloc"]],
                                    [r[metric] for r in per[peer]])
        hs = med["hsmalloc"] / med[peer]
        mark = "" if hs <= 1.25 else " **over 1.25**"
        cells = " | ".join(f"{med[n]:.3f}" if unit == "s" else f"{med[n]:.1f}" for n in names)
        lines.append(f"| {row} | {cells} | {best} | {hs:.2f}x {peer} "
                     f"[{paired.ci[0]:.2f}, {paired.ci[1]:.2f}]{mark} |")
    cells = " | ".join(f"{geomean(ratios[n]):.3f}" for n in names)
    lines.append(f"| geomean of x best | {cells} | | |")
    return lines, ratios


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkout")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1, help="rounds run first and not counted")
    ap.add_argument("--procs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", default="", help="rows to run, comma separated")
    ap.add_argument("--allocators", default="", help="a subset of the configurations")
    ap.add_argument("--build", default="/tmp/hs-mimalloc-bench")
    ap.add_argument("--hsmalloc", default=str(NATIVE / "lib" / "libhsmalloc.so"))
    ap.add_argument("--no-secure", action="store_true")
    ap.add_argument("--also", action="append", default=[],
                    help="NAME=LIB[:VAR=VALUE,...]: another library to run (its medians are "
                         "listed with the minor faults)")
    ap.add_argument("--metric", choices=("suite", "cpu"), default="suite",
                    help="suite: the suite's time (elapsed, or relative time); cpu: the CPU "
                         "seconds of the work (for a machine shared with other jobs)")
    ap.add_argument("--build-only", action="store_true",
                    help="build the --only rows' programs and print each row's command, "
                         "'ROW PROGRAM ARGS...' a line (rows read no stdin)")
    ap.add_argument("--json", default="")
    ap.add_argument("--markdown", default="")
    a = ap.parse_args()
    if a.rounds < 1 or a.procs < 1 or a.warmup < 0:
        sys.exit("bench_mimalloc_suite: --rounds and --procs must be at least 1, --warmup "
                 "at least 0")
    if a.build_only:
        return print_commands(a.checkout, Path(a.build), a.only)
    if not MEASURE.exists():
        sys.exit(f"bench_mimalloc_suite: {MEASURE} is missing (build the native parts, or set "
                 "HEAPSCOPE_NATIVE_DIR)")
    bench, exe_dir = build(a.checkout, Path(a.build))
    all_rows = rows(a.procs, bench)
    only = [r for r in a.only.split(",") if r]
    unknown = sorted(set(only) - {r[0] for r in all_rows})
    if unknown:
        sys.exit(f"bench_mimalloc_suite: unknown rows: {', '.join(unknown)}")
    chosen = [r for r in all_rows if not only or r[0] in only]
    confs = configs(a.hsmalloc, not a.no_secure, a.also)
    if a.allocators:
        want = a.allocators.split(",")
        confs = [c for c in confs if c[0] in want]
    names = [c[0] for c in confs]
    results = {r[0]: {n: [] for n in names} for r in chosen}
    load0 = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    for rnd in range(a.warmup + a.rounds):
        for row in chosen:
            k = rnd % len(confs)
            for name, env in confs[k:] + confs[:k]:
                res = run_one(exe_dir, row, env)
                if "error" in res:
                    sys.exit(f"bench_mimalloc_suite: {name}: {res['error']}")
                if rnd >= a.warmup:
                    results[row[0]][name].append(res)
        done = rnd + 1 - a.warmup
        print(f"round {done}/{a.rounds} done (load {os.getloadavg()[0]:.1f})", file=sys.stderr)
        if done > 0 and done < a.rounds:
            write(a, names, results, done, started, load0, quiet=True)
    write(a, names, results, a.rounds, started, load0, quiet=False)


def write(a, names, results, rounds, started, load0, quiet):
    """The tables of the rounds so far: printed at the end, and written to --markdown and
    --json after every round (a run cut short keeps the rounds it finished)."""
    load1 = os.getloadavg()[0]
    warm = f"after {a.warmup} warm-up round{'s' if a.warmup != 1 else ''}" if a.warmup else \
        "without a warm-up"
    out = [f"mimalloc-bench ({a.checkout}), {rounds} interleaved round{'s' if rounds != 1 else ''} "
           f"{warm}, --procs {a.procs}, --metric {a.metric}, started {started}, load average "
           f"{load0:.1f} -> {load1:.1f}", ""]
    five = [n for n in names if n in FIVE]
    time_metric = "time" if a.metric == "suite" else "cpu_work"
    time_title = ("time, s (median; the suite's elapsed or relative time)" if a.metric == "suite"
                  else "CPU time of the work, s (median)")
    for metric, title in ((time_metric, time_title), ("rss_mib", "max RSS, MiB (median)")):
        out += [f"**{title}**", ""]
        lines, ratios = table(results, five, metric)
        out += lines + [""]
        if "hsmalloc-secure" in names:
            rel = [stats.median([r[metric] for r in results[row]["hsmalloc-secure"]]) /
                   stats.median([r[metric] for r in results[row]["hsmalloc"]])
                   for row in results]
            worst = max(zip(rel, results), key=lambda t: t[0])
            out += [f"secure hsmalloc / hsmalloc ({metric}): geomean {geomean(rel):.3f}, "
                    f"worst {worst[0]:.2f} ({worst[1]})", ""]
    extra = [n for n in names if n not in FIVE]
    if extra:
        out += [f"**{', '.join(extra)} (medians: {time_metric} s, max RSS MiB)**", "",
                "| row | " + " | ".join(extra) + " | hsmalloc |", "|---" * (len(extra) + 2) + "|"]
        for row, per in results.items():
            out.append(f"| {row} | " + " | ".join(
                f"{stats.median([r[time_metric] for r in per[n]]):.3f} / "
                f"{stats.median([r['rss_mib'] for r in per[n]]):.1f}"
                for n in extra + ["hsmalloc"]) + " |")
        out.append("")
    out += ["**minor faults (median)**", "", "| row | " + " | ".join(names) + " |",
            "|---" * (len(names) + 1) + "|"]
    for row, per in results.items():
        out.append(f"| {row} | " + " | ".join(
            f"{stats.median([r['minflt'] for r in per[n]]):,.0f}" for n in names) + " |")
    text = "\n".join(out)
    if not quiet:
        print(text)
    if a.markdown:
        Path(a.markdown).write_text(text + "\n")
    if a.json:
        Path(a.json).write_text(json.dumps({"rounds": rounds, "procs": a.procs,
                                            "started": started, "results": results}, indent=1))


if __name__ == "__main__":
    main()
