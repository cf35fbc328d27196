"""`heapscope leaks FILE|DIR... [--suppressions FILE] [--fail-on-leaks]`: blocks not freed at exit.

Per stack trace type, the blocks and bytes still live when the snapshot was taken
(at exit), with LeakSanitizer-style suppressions (`leak:PATTERN` lines, matched
against every frame's function, source file and module; see
heapscope.analysis.suppressions). --fail-on-leaks exits 1 when any leak is left
after suppressions: a CI check.
"""
import sys

from heapscope.analysis import suppressions
from heapscope.analysis.leaks import build_leaks
from heapscope.commands.tracked_options import add_tracked_options, emit_tracked, header, load
from heapscope.render.leaks_text import render, render_csv
from heapscope.render.text import counted


def register(sub):
    p = sub.add_parser("leaks", help="blocks not freed at exit per stack trace type, with suppressions (--track)",
                       description=__doc__.split("\n\n")[1])
    add_tracked_options(p)
    p.add_argument("--suppressions", metavar="FILE",
                   help="LeakSanitizer-style suppressions: `leak:PATTERN` lines, `#` comments")
    p.add_argument("--fail-on-leaks", action="store_true",
                   help="exit 1 when leaks remain after suppressions (for CI)")
    p.set_defaults(func=run)


def run(args):
    rules = suppressions.load(args.suppressions) if args.suppressions else []
    profiles, entries, sym = load(args)
    doc = build_leaks(entries, rules, args.suppressions, top=args.top, depth=args.depth)
    doc.update(header(args, profiles, sym))
    emit_tracked(args, doc, render, render_csv)
    tot = doc["totals"]
    if args.fail_on_leaks and tot["reported_blocks"]:
        print(f"heapscope: {counted(tot['reported_bytes'], 'byte')} leaked in "
              f"{counted(tot['reported_blocks'], 'block')} ({counted(tot['reported_types'], 'stack trace type')}) "
              f"after suppressions", file=sys.stderr)
        return 1
    return 0
