"""`heapscope diff A B`: compare two recordings per size, region and stack trace type.

    heapscope diff before/ after/ [--region local] [--size 12,24] [--stacks] [--top 20]
                   [--fail-if-more 5 [--metric count|bytes]] [--format text|json|csv] [-o FILE]

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
    p.add_argument("a", metavar="A", help="profile file or directory: before")
    p.add_argument("b", metavar="B", help="profile file or directory: after")
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
    add_html_option(p, lambda a: ([a.a], [a.b]))
    p.set_defaults(func=run)


def run(args):
    limit = args.fail_if_more
    if limit is not None and not (math.isfinite(limit) and limit >= 0):
        # nan compares false and inf is never exceeded: either would silently turn the check off
        raise HeapscopeError(f"--fail-if-more takes a finite percentage >= 0, not {limit:g}")
    sizes = SizeSet(args.size)
    side_a, side_b = read_profiles([args.a], args), read_profiles([args.b], args)
    sym = symbolizer()
    try:
        result = diff.compare(side_a, side_b, sizes, args.region, stacks=args.stacks, symbolizer=sym)
    finally:
        notes(sym.notes)
    warnings(result["warnings"])
    reason = (diff.regression(result["total"], limit, args.metric) if limit is not None else None)
    emit(args, result, {
        "text": lambda r: diff_text.render(r, args.a, args.b, args.top),
        "csv": diff_csv,
        "json": lambda r: to_json(diff.document(r, args.a, args.b, args.region, args.size,
                                                args.metric, reason))})
    if reason:
        sys.stdout.flush()
        print(f"heapscope: diff: regression: {reason}", file=sys.stderr)
        return 1
    return 0
