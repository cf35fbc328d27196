"""`heapscope run --allocator NAME [--stats] [--hot-sizes PROFILE|DIR] -- cmd args...`: run a
program on an allocator.

Preloads the chosen allocator (hsmalloc, bundled; jemalloc, tcmalloc, mimalloc from
their Debian packages; glibc = no preload) in front of any LD_PRELOAD the user had,
runs the program, and returns its exit code (128+N when signal N killed it).
--stats asks the allocator for its statistics at exit, where it has such a switch.
--hot-sizes (hsmalloc) reads recorded profiles, picks the sizes that take the largest
shares of the allocations (analysis.hot_sizes) and names them in HSMALLOC_HOT_SIZES, so
that they get exact classes from the first allocation.
"""
import argparse
import os
import signal
import sys

from heapscope.allocators import ALL as ALLOCATORS, require_allocator
from heapscope.analysis.hot_sizes import hot_sizes, variable_value
from heapscope.commands.reading import read_profiles
from heapscope.errors import HeapscopeError
from heapscope.launch import check_program, program_words, run_forwarding

# How each allocator is asked to print statistics when the program exits.
STATS_ENV = {
    "hsmalloc": {"HSMALLOC_STATS": "1"},
    "jemalloc": {"MALLOC_CONF": "stats_print:true"},
    "mimalloc": {"MIMALLOC_SHOW_STATS": "1"},
    "tcmalloc": {"MALLOCSTATS": "1"},
}
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)

EPILOG = """\
examples:
  heapscope run --allocator hsmalloc -- ./solver input.dat
  heapscope run --allocator jemalloc --stats -- python3 script.py
  mpirun -np 4 heapscope run --allocator hsmalloc -- ./app
  heapscope run --allocator hsmalloc --hot-sizes run1/ --stats -- ./solver input.dat
hsmalloc's options are HSMALLOC_* environment variables (see docs/hsmalloc.md);
set them before heapscope run, they are passed on."""


def register(sub):
    p = sub.add_parser(
        "run", help="run a program on a chosen allocator (hsmalloc or a peer)",
        description="Run CMD with the chosen malloc implementation preloaded.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="heapscope run --allocator NAME [--stats] [--hot-sizes PROFILE|DIR] -- CMD [ARGS...]")
    p.add_argument("--allocator", required=True, choices=ALLOCATORS, metavar="NAME",
                   help=f"one of: {', '.join(ALLOCATORS)}")
    p.add_argument("--stats", action="store_true",
                   help="print the allocator's statistics when the program exits "
                        "(hsmalloc, jemalloc, mimalloc, tcmalloc)")
    p.add_argument("--hot-sizes", action="append", metavar="PROFILE|DIR",
                   help="hsmalloc: give exact classes to the sizes that take the most "
                        "allocations in these recorded profiles (repeatable)")
    p.add_argument("--print-library", action="store_true",
                   help="print the library to put in LD_PRELOAD for NAME and exit")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="CMD",
                   help="the program and its arguments, after --")
    p.set_defaults(func=run)


def _command(args):
    command = program_words(args.command, "no program to run: heapscope run --allocator NAME "
                                          "-- CMD [ARGS...]")
    check_program(command[0])
    return command


def environment(allocator, stats=False, base=None):
    """The environment that runs a program on `allocator` (used by run and by tests)."""
    env = dict(os.environ if base is None else base)
    library = require_allocator(allocator)
    if library is not None:
        env["LD_PRELOAD"] = " ".join(filter(None, [str(library), env.get("LD_PRELOAD", "")]))
    if stats:
        if allocator not in STATS_ENV:
            raise HeapscopeError(f"{allocator} has no switch to print statistics at exit "
                                 f"(--stats works with {', '.join(STATS_ENV)})")
        env.update(STATS_ENV[allocator])
    return env


def hot_sizes_variable(allocator, paths, notes_to=sys.stderr):
    """HSMALLOC_HOT_SIZES from the profiles, or None when no size qualifies (said on
    notes_to, one line)."""
    if allocator != "hsmalloc":
        raise HeapscopeError(f"--hot-sizes works with hsmalloc only, not {allocator}")
    hot = hot_sizes(read_profiles(paths))
    where = ", ".join(paths)
    if not hot:
        print(f"heapscope: note: no size takes 5% of the allocations in {where}; "
              "hsmalloc detects hot sizes at run time", file=notes_to)
        return None
    shares = ", ".join(f"{h.size} ({100 * h.share:.1f}%)" for h in hot)
    print(f"heapscope: hot sizes from {where}: {shares}", file=notes_to)
    return variable_value(hot)


def run(args):
    if args.print_library:
        library = require_allocator(args.allocator)
        print(library if library is not None else "")
        return 0
    command = _command(args)
    env = environment(args.allocator, args.stats)
    if args.hot_sizes:
        value = hot_sizes_variable(args.allocator, args.hot_sizes)
        if value is not None:
            env["HSMALLOC_HOT_SIZES"] = value
    return run_forwarding(command, env, FORWARDED)
