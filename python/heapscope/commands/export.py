"""`heapscope export`: stack trace types, or one process's heap over time, in other tools' formats.

    heapscope export run/ --format collapsed [--value bytes] -o allocs.folded
    heapscope export run/ --format pprof -o allocs.pb.gz && go tool pprof -top allocs.pb.gz
    heapscope export run/heapscope.vm.42.hsp --format massif -o massif.out && ms_print massif.out
    heapscope export run/ --format json -o stacks.json

collapsed: "root;...;leaf value" lines for flamegraph.pl and speedscope; pprof: gzip-
compressed profile.proto with sample types alloc_objects and alloc_space; json: the
stack trace types with their frames, counts and bytes (analysis.stacks.document). These
export stack trace types (record them with `heapscope record --sizes SPEC`); the totals
equal the recorded counts of those sizes unless stacks were lost (a warning says so).
massif: Valgrind Massif's massif.out of one process (its timeline samples, and with
--track the peak and exit trees) for ms_print and massif-visualizer (export/massif.py).
Without -o the result goes to standard output (pprof, binary, needs -o FILE).
"""
import io
import sys

from heapscope.analysis import stacks as weighted
from heapscope.analysis.loading import lost_stack_warning
from heapscope.commands.options import add_launchers_option
from heapscope.commands.options import (add_output_options, add_selection_options, emit,
                                        write_result)
from heapscope.commands.reading import notes, read_profiles, selected_stacks, symbolizer, warnings
from heapscope.errors import HeapscopeError
from heapscope.export.collapsed import ROOTS, write_collapsed
from heapscope.export.pprof import comments, write_pprof
from heapscope.render.text import counted

FORMATS = ("collapsed", "pprof", "massif", "json")


def register(sub):
    p = sub.add_parser("export", help="export stack trace types (collapsed stacks, pprof) or a "
                                      "process's heap over time (Valgrind Massif)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR", help="profile files or directories (merged)")
    add_output_options(p, FORMATS, required_format=True)
    add_launchers_option(p)
    add_selection_options(p, size_help="collapsed, pprof, json: sizes to export (12,24,100-200; "
                                       "default all recorded)",
                          region_help="collapsed, pprof, json: only stack types recorded in this region")
    p.add_argument("--value", choices=("count", "bytes"), default="count",
                   help="collapsed: weight of a path, allocations or bytes (default count); "
                        "pprof: the sample type shown by default (alloc_objects or alloc_space)")
    p.add_argument("--lines", action="store_true", help="collapsed: frames as 'function (file:line)'")
    p.add_argument("--split", metavar="region,size", default="",
                   help="collapsed: add root frames per region and/or size")
    p.set_defaults(func=run)


def _to_stdout(args) -> bool:
    return not args.output or args.output == "-"


def _check(args, roots) -> None:
    for r in roots:
        if r not in ROOTS:
            raise HeapscopeError(f"--split {args.split!r}: expected region, size or region,size")
    if args.format == "pprof" and _to_stdout(args):
        raise HeapscopeError("pprof output is binary: give a file name with -o")
    if args.format == "pprof" and args.lines:
        raise HeapscopeError("--lines is for --format collapsed: pprof keeps every frame's file "
                             "and line (go tool pprof -lines shows them)")
    if args.format == "pprof" and roots:
        raise HeapscopeError("--split is for --format collapsed: pprof labels each sample with "
                             "its region and size (go tool pprof -tagroot region,bytes)")
    if args.format == "json" and (args.lines or roots):
        raise HeapscopeError("--lines and --split are for --format collapsed: the JSON export "
                             "holds every frame's file and line and each stack's region and size")


def _massif(args) -> int:
    from heapscope.export.massif import to_massif
    if args.size is not None or args.region is not None or args.lines or args.split \
            or args.value != "count":
        raise HeapscopeError("--size, --region, --value, --lines and --split do not apply to "
                             "--format massif (it exports the whole heap of one process)")
    profiles = read_profiles(args.profiles, args)
    if len(profiles) != 1:
        raise HeapscopeError(f"--format massif exports one process; {len(profiles)} profiles given "
                             f"(name one file)")
    sym = symbolizer()
    text = to_massif(profiles[0], sym)
    notes(sym.notes)
    write_result(text, args.output)
    where = "standard output" if _to_stdout(args) else args.output
    print(f"heapscope: wrote {where}: {text.count('snapshot=')} Massif snapshots", file=sys.stderr)
    return 0


def run(args):
    roots = [r.strip() for r in args.split.split(",") if r.strip()]
    if args.format == "massif":
        return _massif(args)
    _check(args, roots)
    profiles, sizes, stacks = selected_stacks(args)
    count, nbytes = weighted.totals(stacks)
    if args.format == "collapsed":
        text = io.StringIO()
        write_collapsed(stacks, text, args.value, args.lines, roots)
        write_result(text.getvalue(), args.output)
    elif args.format == "json":
        emit(args, weighted.document(stacks, profiles, args.size, args.region), {})
    else:
        write_pprof(stacks, args.output, [m for p in profiles for m in p.modules],
                    time_nanos=min(p.start_real_ns for p in profiles),
                    comments=comments(profiles, sizes, args.region), value=args.value)
    warnings([lost_stack_warning(profiles)])
    where = "standard output" if _to_stdout(args) else args.output
    print(f"heapscope: wrote {where}: {counted(len(stacks), 'stack trace type')}, "
          f"{counted(count, 'allocation')}, {counted(nbytes, 'byte')}", file=sys.stderr)
    return 0
