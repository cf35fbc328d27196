"""`heapscope temporaries FILE|DIR...`: the sizes and call paths that make temporaries.

A temporary is a block freed with at most N other allocations of the same thread in
between (N from `heapscope record --track --temporary-between N`, 0 by default), and
within the time bound when one was recorded. Sizes and stack trace types are ranked
by their number of temporaries, with the share of their allocations those are.
"""
from heapscope.analysis.lifetimes import build_temporaries
from heapscope.commands.tracked_options import add_tracked_options, emit_tracked, header, load
from heapscope.render.lifetimes_text import render_temporaries, temporaries_csv


def register(sub):
    p = sub.add_parser("temporaries", help="sizes and stack trace types ranked by temporaries (--track)",
                       description=__doc__.split("\n\n")[1])
    add_tracked_options(p)
    p.set_defaults(func=run)


def run(args):
    profiles, entries, sym = load(args)
    doc = build_temporaries(profiles, entries, top=args.top, depth=args.depth)
    doc.update(header(args, profiles, sym))
    emit_tracked(args, doc, render_temporaries, temporaries_csv)
    return 0
