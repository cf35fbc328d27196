#!/usr/bin/env python3
"""Mutation check: does the suite notice the bugs it is meant to catch?

Each mutation below plants one known bug (an exact snippet of a file replaced), runs the
tests that should notice it, and puts the file back (always: also on Ctrl-C, SIGTERM or a
failed build; a run killed harder leaves a backup that the next run restores first). A
mutation is *killed* when those tests fail, *survived* when they pass: a missing test.
C mutations rebuild the native tree with CMake into its own build directory.

    python3 scripts/mutation_check.py              # all of them, then the score
    python3 scripts/mutation_check.py --list       # names and what each plants
    python3 scripts/mutation_check.py NAME ...     # only these

Run before a release (it takes a while: a rebuild per C mutation), not in CI. Standard
library only; the tests run with this interpreter, PYTHONPATH=python and the native dir
of the build directory (--build-dir, default build-mutation).
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Sequence

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    name: str
    what: str               # the bug, in a phrase
    path: str               # relative to the checkout
    original: str           # exact text, found once in the file
    replacement: str
    tests: Sequence[str]    # pytest node ids or paths that must fail

    @property
    def native(self) -> bool:
        return not self.path.startswith("python/")


MUTATIONS: List[Mutation] = [
    Mutation("temporaries-types-set",
             "temporaries' per-size count of stack trace types set instead of incremented",
             "python/heapscope/analysis/lifetimes.py",
             "        acc[2] += 1\n", "        acc[2] = 1\n",
             ["tests/e2e/test_temporaries_per_size.py", "tests/unit/test_lifetime_analysis.py"]),
    Mutation("pprof-no-load-bias",
             "pprof locations written as module offsets, without the load bias",
             "python/heapscope/export/pprof.py",
             "address = outer.offset + (m.bias if m is not None else 0)",
             "address = outer.offset",
             ["tests/e2e/test_pprof_addresses.py", "tests/e2e/test_fem_fix_and_compare.py"]),
    Mutation("diff-threshold-inclusive",
             "diff --fail-if-more P fails a rise of exactly P percent",
             "python/heapscope/analysis/diff.py",
             "    if change > percent:\n", "    if change >= percent:\n",
             ["tests/unit/test_diff_regression.py", "tests/e2e/test_diff.py"]),
    Mutation("reader-crc-unchecked",
             "the reader accepts a chunk whose crc does not match",
             "python/heapscope/profile/framing.py",
             "            if not crc_ok(payload, head):\n", "            if False:\n",
             ["tests/format"]),
    Mutation("size-0-dropped",
             "the recorder drops the counts of zero-byte allocations when it writes",
             "src/recorder/count/counters.c",
             "for (uint64_t s = 0; s < HSR_SMALL_SIZES; s++) {",
             "for (uint64_t s = 1; s < HSR_SMALL_SIZES; s++) {",
             ["tests/e2e/test_record_counts.py"]),
    Mutation("hsmalloc-class-off-by-one",
             "hsmalloc puts a request 1 byte past a class boundary above 128 B one class too "
             "low: a block 1 byte short (rounding (size + 14) >> 4 below 128 B would be no bug: "
             "the table asks only multiples of 8)",
             "src/allocator/sizeclass.c",
             "  size_t idx = (size - 1 - ((size_t)1 << b)) >> (b - 3);\n",
             "  size_t idx = (size - 2 - ((size_t)1 << b)) >> (b - 3);\n",
             ["tests/allocator/test_size_classes.py", "tests/allocator/test_api.py"]),
    Mutation("realloc-0-counted",
             "realloc(p, 0) counted as an allocation of size 0 instead of a free",
             "src/recorder/hooks/malloc.c",
             "    if (old && n == 0) {\n", "    if (0) {\n",
             ["tests/e2e/test_record_counts.py"]),
    Mutation("failed-not-counted",
             "a failed allocation is not counted as failed",
             "src/recorder/count/counting.h",
             "    if (HSR_UNLIKELY(failed))\n", "    if (HSR_UNLIKELY(0 && failed))\n",
             ["tests/e2e/test_record_counts.py"]),
]


class Interrupted(Exception):
    pass


def _on_term(signum, frame):
    raise Interrupted(f"signal {signum}")


def backup_dir(build: Path) -> Path:
    return build / "mutation-backup"


def restore_leftovers(build: Path) -> None:
    """Put back files a killed run left mutated (their originals are kept under build/)."""
    saved = backup_dir(build)
    if not saved.is_dir():
        return
    for copy in sorted(p for p in saved.rglob("*") if p.is_file()):
        target = ROOT / copy.relative_to(saved)
        shutil.copyfile(copy, target)
        print(f"mutation_check: restored {target.relative_to(ROOT)} left mutated by an earlier run")
    shutil.rmtree(saved)


def build_native(build: Path) -> bool:
    if not (build / "CMakeCache.txt").exists():
        res = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja"],
                             capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"mutation_check: cmake configure failed:\n{res.stderr[-2000:]}")
    res = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True)
    return res.returncode == 0


def run_tests(build: Path, tests: Sequence[str], timeout: int):
    """(passed, first failed test or a reason)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"),
               HEAPSCOPE_NATIVE_DIR=str(build / "native"))
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    try:
        res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout} s"
    if res.returncode == 0:
        return True, ""
    failed = [line.split()[1] for line in res.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    return False, failed[0] if failed else f"pytest exit {res.returncode}: {res.stdout.strip()[-200:]}"


def check(m: Mutation, build: Path, timeout: int) -> str:
    """'killed', 'survived' or 'error: ...'; the file is always restored."""
    path = ROOT / m.path
    original = path.read_text()
    if original.count(m.original) != 1:
        return f"error: the original snippet is in {m.path} {original.count(m.original)} times, not once"
    saved = backup_dir(build) / m.path
    saved.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, saved)
    try:
        path.write_text(original.replace(m.original, m.replacement))
        if m.native and not build_native(build):
            outcome = "error: the mutated tree does not build"
        else:
            passed, why = run_tests(build, m.tests, timeout)
            outcome = "survived" if passed else f"killed ({why})"
    finally:
        path.write_text(original)
        shutil.rmtree(backup_dir(build))
    # the next mutation runs against the real libraries (after an interruption, the next
    # run's first build sees the restored file as changed and rebuilds it)
    if m.native and not build_native(build):
        sys.exit(f"mutation_check: the tree does not build after restoring {m.path}")
    return outcome


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="only these mutations")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--build-dir", default=str(ROOT / "build-mutation"))
    ap.add_argument("--timeout", type=int, default=900, help="seconds per test run")
    args = ap.parse_args(argv)
    if args.list:
        for m in MUTATIONS:
            print(f"{m.name:26} {m.path}: {m.what}")
        return 0
    unknown = set(args.names) - {m.name for m in MUTATIONS}
    if unknown:
        print(f"mutation_check: unknown mutation: {', '.join(sorted(unknown))} (see --list)",
              file=sys.stderr)
        return 2
    chosen = [m for m in MUTATIONS if not args.names or m.name in args.names]
    build = Path(args.build_dir).resolve()
    build.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, _on_term)
    try:
        restore_leftovers(build)
        print(f"mutation_check: building {build} and running the named tests unmutated")
        if not build_native(build):
            print("mutation_check: the tree does not build", file=sys.stderr)
            return 2
        tests = sorted({t for m in chosen for t in m.tests})
        passed, why = run_tests(build, tests, args.timeout * 2)
        if not passed:
            print(f"mutation_check: the tests fail without any mutation ({why}): fix that first",
                  file=sys.stderr)
            return 2
        killed = survived = errors = 0
        for m in chosen:
            start = time.monotonic()
            outcome = check(m, build, args.timeout)
            print(f"{m.name:26} {outcome}  [{time.monotonic() - start:.0f} s]", flush=True)
            if outcome.startswith("killed"):
                killed += 1
            elif outcome == "survived":
                survived += 1
            else:
                errors += 1
    except (KeyboardInterrupt, Interrupted):
        print("mutation_check: interrupted; every file is restored", file=sys.stderr)
        return 130
    scored = killed + survived
    print(f"score: {killed}/{scored} killed" + (f" ({100 * killed / scored:.0f}%)" if scored else "")
          + (f", {errors} could not be applied" if errors else ""))
    return 0 if survived == 0 and errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
