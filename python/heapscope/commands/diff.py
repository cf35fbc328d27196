"""`heapscope diff A B`: compare two recordings per size, region and stack trace type.

    heapscope diff before/ after/ [--region local] [--size 12,24] [--stacks] [--top 20]
                   [--fail-if-more 5 [--metric count|bytes]] [--format text|json|csv] [-o FILE]
    heapscope diff --before run1/ --before run2/ --before run3/ --after fix1/ --after fix2/ ...

Several runs per side (--before and --after, each one run's file or directory, instead
of A and B): each row compares the means of the runs, shows each side's lowest..highest
run, and calls a change whose ranges meet "within run-to-run variation"; --fail-if-more
then fails only when B's lowest run exceeds A's highest by more than PERCENT.

A and B are profile files or directories (all their processes merged). Rows are per
(region, size): allocations and bytes before and after, delta and ratio; then the
migrations (sizes that fell and sizes that rose in one region). --stacks also matches
the stack trace types of A and B by symbolized frames (function, file, line). With
--fail-if-more PERCENT the exit status is 1, and one line on stderr says why, when the
total allocation count (--metric bytes: requested bytes) of the selection rose by more
than PERCENT; 0 otherwise. Other errors exit 2.

The comparison: analysis/diff.py; text: render/diff_text.py; CSV: render/csv_tables.py.
"""
import math
import sys

from heapscope.analysis import diff
from heapscope.analysis.selection import SizeSet
from heapscope.commands.options import add_launchers_option
from heapscope.commands.options import (add_html_option, add_output_options, add_selection_options,
                                        add_top_option, emit)
from heapscope.render.json_text import to_json
from heapscope.commands.reading import notes, read_profiles, symbolizer, warnings
from heapscope.errors import HeapscopeError
from heapscope.render import diff_text
from heapscope.render.csv_tables import diff_csv


def register(sub):
    p = sub.add_parser("diff", help="compare two recordings per size, region and stack type",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("a", metavar="A", nargs="?", help="profile file or directory: before")
    p.add_argument("b", metavar="B", nargs="?", help="profile file or directory: after")
    p.add_argument("--before", action="append", metavar="RUN",
                   help="one run of A (a profile file or a directory of one run's profiles); "
                        "repeat for several runs of the same program and input, instead of A B")
    p.add_argument("--after", action="append", metavar="RUN",
                   help="one run of B; repeat as --before")
    add_selection_options(p, size_help="only these sizes (12,24,100-200)", region_help="only this region")
    p.add_argument("--stacks", action="store_true",
                   help="also compare stack trace types (matched by function, file and line)")
    p.add_argument("--fail-if-more", type=float, metavar="PERCENT",
                   help="exit 1 when the total rose by more than PERCENT")
    p.add_argument("--metric", choices=diff.METRICS, default="count",
                   help="what --fail-if-more compares: allocation count (default) or bytes")
    add_top_option(p, "text: rows per table")
    add_output_options(p)
    add_launchers_option(p)
    add_html_option(p, lambda a: (a.before[:1], a.after[:1], (a.before, a.after)))
    p.set_defaults(func=run)


def sides(args):
    """(runs of A, runs of B): A B, or the --before and --after runs; one line when mixed
    or missing."""
    if args.before or args.after:
        if args.a is not None:
            raise HeapscopeError("diff takes A B, or --before RUN ... --after RUN ..., not both")
        if not args.before or not args.after:
            missing = "--after" if args.before else "--before"
            raise HeapscopeError(f"diff: {missing} RUN is missing: each side needs one run or more")
        return list(args.before), list(args.after)
    if args.a is None or args.b is None:
        raise HeapscopeError("diff needs two recordings: heapscope diff A B (or --before RUN ... "
                             "--after RUN ... for several runs per side)")
    return [args.a], [args.b]


def run(args):
    limit = args.fail_if_more
    if limit is not None and not (math.isfinite(limit) and limit >= 0):
        # nan compares false and inf is never exceeded: either would silently turn the check off
        raise HeapscopeError(f"--fail-if-more takes a finite percentage >= 0, not {limit:g}")
    sizes = SizeSet(args.size)
    args.before, args.after = sides(args)
    runs_a = [read_profiles([run], args) for run in args.before]
    runs_b = [read_profiles([run], args) for run in args.after]
    a, b = " ".join(args.before), " ".join(args.after)
    sym = symbolizer()
    try:
        result = diff.compare_runs(runs_a, runs_b, sizes, args.region, stacks=args.stacks,
                                   symbolizer=sym)
    finally:
        notes(sym.notes)
    warnings(result["warnings"])
    per_run = [[c if args.metric == "count" else n for c, n in side] for side in result["total_runs"]]
    reason = (diff.regression(result["total"], limit, args.metric, per_run)
              if limit is not None else None)
    emit(args, result, {
        "text": lambda r: diff_text.render(r, a, b, args.top),
        "csv": diff_csv,
        "json": lambda r: to_json(diff.document(r, a, b, args.region, args.size,
                                                args.metric, reason))})
    if reason:
        sys.stdout.flush()
        print(f"heapscope: diff: regression: {reason}", file=sys.stderr)
        return 1
    return 0
