"""`heapscope export`: stack trace types, or one process's heap over time, in other tools' formats.

    heapscope export run/ --format collapsed [--value bytes] -o allocs.folded
    heapscope export run/ --format pprof -o allocs.pb.gz && go tool pprof -top allocs.pb.gz
    heapscope export run/heapscope.vm.42.hsp --format massif -o massif.out && ms_print massif.out

collapsed: "root;...;leaf value" lines for flamegraph.pl and speedscope; pprof: gzip-
compressed profile.proto with sample types alloc_objects and alloc_space. Both export
stack trace types (record them with `heapscope record --sizes SPEC`); the totals equal
the recorded counts of those sizes unless stacks were lost (a warning says so).
massif: Valgrind Massif's massif.out of one process (its timeline samples, and with
--track the peak and exit trees) for ms_print and massif-visualizer (export/massif.py).
"""
import io
import sys

from heapscope.analysis.loading import load, lost_stack_warning, require_stacks, weighted_stacks
from heapscope.analysis.selection import SizeSet
from heapscope.analysis.stacks import totals
from heapscope.atomic import write_atomic
from heapscope.errors import HeapscopeError
from heapscope.export.collapsed import ROOTS, write_collapsed
from heapscope.export.pprof import write_pprof
from heapscope.render.text import counted


def register(sub):
    p = sub.add_parser("export", help="export stack trace types (collapsed stacks, pprof) or a "
                                      "process's heap over time (Valgrind Massif)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR", help="profile files or directories (merged)")
    p.add_argument("--format", required=True, choices=("collapsed", "pprof", "massif"),
                   help="massif: heap over time and peak tree of one profile (export/massif.py)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file ('-' = standard output, collapsed only)")
    p.add_argument("--size", metavar="SPEC", help="collapsed, pprof: sizes to export (12,24,100-200; "
                                                  "default all recorded)")
    p.add_argument("--region", metavar="R", help="collapsed, pprof: only stack types recorded in this region")
    p.add_argument("--value", choices=("count", "bytes"), default="count",
                   help="collapsed: weight of a path, allocations or bytes (default count); "
                        "pprof: the sample type shown by default (alloc_objects or alloc_space)")
    p.add_argument("--lines", action="store_true", help="collapsed: frames as 'function (file:line)'")
    p.add_argument("--split", metavar="region,size", default="",
                   help="collapsed: add root frames per region and/or size")
    p.set_defaults(func=run)


def _write_collapsed(stacks, args, roots):
    if args.output == "-":
        return write_collapsed(stacks, sys.stdout, args.value, args.lines, roots)
    text = io.StringIO()
    total = write_collapsed(stacks, text, args.value, args.lines, roots)
    write_atomic(args.output, text.getvalue())
    return total


def run(args):
    roots = [r.strip() for r in args.split.split(",") if r.strip()]
    for r in roots:
        if r not in ROOTS:
            raise HeapscopeError(f"--split {args.split!r}: expected region, size or region,size")
    if args.format == "massif":
        from heapscope.export.massif import export_massif
        return export_massif(args)
    if args.format == "pprof" and args.output == "-":
        raise HeapscopeError("pprof output is binary: give a file name with -o")
    if args.format == "pprof" and args.lines:
        raise HeapscopeError("--lines is for --format collapsed: pprof keeps every frame's file "
                             "and line (go tool pprof -lines shows them)")
    if args.format == "pprof" and roots:
        raise HeapscopeError("--split is for --format collapsed: pprof labels each sample with "
                             "its region and size (go tool pprof -tagroot region,bytes)")
    sizes = SizeSet(args.size)
    profiles = load(args.profiles)
    stacks = weighted_stacks(profiles, sizes, args.region)
    require_stacks(stacks, profiles, sizes, args.region)
    count, nbytes = totals(stacks)
    if args.format == "collapsed":
        _write_collapsed(stacks, args, roots)
    else:
        modules = [m for p in profiles for m in p.modules]
        comments = [f"heapscope export of {', '.join(p.path for p in profiles)}",
                    f"{sizes}" + (f", region {args.region}" if args.region else "")]
        write_pprof(stacks, args.output, modules,
                    time_nanos=min(p.start_real_ns for p in profiles), comments=comments,
                    value=args.value)
    lost = lost_stack_warning(profiles)
    if lost:
        print(f"heapscope: warning: {lost}", file=sys.stderr)
    where = "standard output" if args.output == "-" else args.output
    print(f"heapscope: wrote {where}: {counted(len(stacks), 'stack trace type')}, "
          f"{counted(count, 'allocation')}, {counted(nbytes, 'byte')}", file=sys.stderr)
    return 0
