"""`heapscope peak FILE|DIR...`: each process's heap peak, when, and who held it.

The requested bytes live at the process's global heap peak and the time it was
reached, then the sizes and stack trace types ranked by the bytes they held at that
moment, with their share of the peak. --size/--region narrow the holders listed.
"""
from heapscope.analysis.peak import build_peaks
from heapscope.commands.tracked_options import add_tracked_options, emit_tracked, header, load
from heapscope.render.peak_text import render, render_csv


def register(sub):
    p = sub.add_parser("peak", help="heap peak per process and the stack types holding it (--track)",
                       description=__doc__.split("\n\n")[1])
    add_tracked_options(p)
    p.set_defaults(func=run)


def run(args):
    profiles, _, sym = load(args, per_process=True)
    doc = build_peaks(profiles, args.size, args.region, sym, top=args.top, depth=args.depth)
    doc.update(header(args, profiles, sym))
    emit_tracked(args, doc, render, render_csv)
    return 0
