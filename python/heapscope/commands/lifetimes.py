"""`heapscope lifetimes FILE|DIR... [--size S] [--region R]`: how long blocks live.

Per size and per stack trace type (from `heapscope record --track`): allocations,
frees, blocks live at the snapshot, temporaries, and the lifetime distributions in
time and in allocations made in between (log2 bins, with the bins holding the median
and the 90th percentile), and per size the extra heap bytes the allocator spent
beyond the requested size. Layout: docs/analysis-formats.md.
"""
from heapscope.analysis.lifetimes import build_lifetimes
from heapscope.commands.tracked_options import add_tracked_options, emit_tracked, header, load
from heapscope.render.lifetimes_text import lifetimes_csv, render_lifetimes


def register(sub):
    p = sub.add_parser("lifetimes", help="lifetime distributions per size and stack trace type (--track)",
                       description=__doc__.split("\n\n")[1])
    add_tracked_options(p)
    p.set_defaults(func=run)


def run(args):
    profiles, entries, sym = load(args)
    doc = build_lifetimes(profiles, entries, top=args.top, depth=args.depth)
    doc.update(header(args, profiles, sym))
    emit_tracked(args, doc, render_lifetimes, lifetimes_csv)
    return 0
