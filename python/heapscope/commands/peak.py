"""`heapscope peak FILE|DIR...`: each process's heap peak, when, and who held it.

The requested bytes live at the process's global heap peak and the time it was
reached, then the sizes and stack trace types ranked by the bytes they held at that
moment, with their share of the peak. --size/--region narrow the holders listed.
"""
from heapscope.analysis.peak import build_peak, document
from heapscope.analysis.selection import SizeSet
from heapscope.analysis.tracked import tracked_entries
from heapscope.report.render_peak import render, render_csv
from heapscope.report.tracked_common import add_tracked_options, finish, header, load_tracked


def register(sub):
    p = sub.add_parser("peak", help="heap peak per process and the stack types holding it (--track)",
                       description=__doc__.split("\n\n")[1])
    add_tracked_options(p)
    p.set_defaults(func=run)


def run(args):
    profiles, _, sym = load_tracked(args, per_process=True)
    sizes = SizeSet(args.size)
    tracked_entries(profiles, sizes, args.region, sym)   # an empty selection is an error
    peaks = []
    for i, p in enumerate(profiles):
        every = tracked_entries([p], SizeSet(None), None, sym, required=False)
        chosen = tracked_entries([p], sizes, args.region, sym, required=False)
        peaks.append(build_peak(i, p, chosen, every, top=args.top, depth=args.depth))
    doc = document(peaks)
    doc.update(header(profiles, args, sym))
    finish(args, doc, render, render_csv)
    return 0
