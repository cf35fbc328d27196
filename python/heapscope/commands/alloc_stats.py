"""`heapscope alloc-stats FILE [OTHER]`: hsmalloc's own statistics (the allocator spy).

Reads the JSON dumps hsmalloc writes with HSMALLOC_STATS=json (at exit, and on SIGUSR2)
to HSMALLOC_STATS_FILE, and prints per process the figures of the MPC allocator's
`chain --all -stat`: requested, real and virtual memory, overhead, allocations and
reallocations, remote-free queues, fast-path hit rate and fragmentation, for the process,
each thread heap and each chain. With OTHER, one run against the other: the totals,
then each chain, matched by name. FILE may also be an event trace (HSMALLOC_TRACE): it is
replayed (address space, segments, pages, purges over time; pressure levels; heaps).
"""
import argparse

from heapscope.analysis.alloc_stats import EVENTS, build_alloc_stats, compare_alloc_stats
from heapscope.analysis.alloc_trace import build_alloc_trace
from heapscope.commands.options import add_output_options, emit
from heapscope.errors import HeapscopeError
from heapscope.profile.hsmalloc_stats import read_stats
from heapscope.profile.hsmalloc_trace import is_trace, read_trace
from heapscope.render.alloc_stats_text import render, render_compare
from heapscope.render.alloc_trace_text import render_trace

EPILOG = """\
examples:
  HSMALLOC_STATS=json HSMALLOC_STATS_FILE=run1.json heapscope run --allocator hsmalloc -- ./solver
  kill -USR2 PID                       # a dump while it runs (appended to the same file)
  heapscope alloc-stats run1.json
  heapscope alloc-stats run1.json run2.json --format json
  HSMALLOC_TRACE=trace.%p heapscope run --allocator hsmalloc -- ./solver
  heapscope alloc-stats trace.12345    # the event trace replayed
The last dump of each process is used (--event exit|signal|call: the last of that kind)."""


def register(sub):
    p = sub.add_parser(
        "alloc-stats", help="hsmalloc's statistics dumps: per process, thread heap and chain; "
                            "one run against another",
        description=__doc__.split("\n\n")[1], epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="statistics written with HSMALLOC_STATS=json")
    p.add_argument("other", metavar="OTHER", nargs="?",
                   help="a second run's statistics: compare FILE (A) with it (B)")
    p.add_argument("--event", choices=EVENTS,
                   help="use each process's last dump of this kind (default: its last dump)")
    add_output_options(p, formats=("text", "json"))
    p.set_defaults(func=run)


def run(args):
    if is_trace(args.file):
        if args.other is not None:
            raise HeapscopeError(f"{args.file}: an event trace; only statistics dumps are compared")
        emit(args, build_alloc_trace(read_trace(args.file)), {"text": render_trace})
        return 0
    doc = build_alloc_stats(args.file, read_stats(args.file), args.event)
    if args.other is None:
        emit(args, doc, {"text": render})
        return 0
    other = build_alloc_stats(args.other, read_stats(args.other), args.event)
    for d in (doc, other):
        if not d["processes"]:
            raise HeapscopeError(f"{d['file']}: no {args.event} dump to compare")
    emit(args, compare_alloc_stats(doc, other), {"text": render_compare})
    return 0
