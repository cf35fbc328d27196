"""`heapscope timeline FILE|DIR... [--format text|json|csv] [-o FILE] [--plot OUT.png|OUT.svg]`:
heap in use, RSS and PSS over the run, with the region spans and the MPI calipers.

Reads the TIMELINE chunks the recorder appends as the run goes, so a process killed
before its first snapshot (SIGKILL) shows its timeline up to the last flush. One file:
sparklines of heap, RSS and PSS with their peaks, and the regions; several files (or a
directory): one line per process.
"""
import sys

from heapscope.analysis.timeline import document, load_timelines
from heapscope.commands.options import add_output_options, deprecated, emit
from heapscope.errors import HeapscopeError
from heapscope.render.plots import check_path, write_timeline_plot
from heapscope.render.timeline_text import render, render_csv


def register(sub):
    p = sub.add_parser("timeline", help="heap, RSS and PSS over time (sparklines, PNG/SVG, JSON)",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR", help="profile files or directories")
    p.add_argument("--plot", metavar="OUT.png|OUT.svg",
                   help="also draw the timeline into this file (format from the suffix)")
    p.add_argument("--json", action="store_true",
                   help="deprecated spelling of --format json")
    p.add_argument("--width", type=int, default=60, metavar="N",
                   help="columns of the sparklines (default 60)")
    add_output_options(p)
    p.set_defaults(func=run)


def run(args):
    if not 8 <= args.width <= 1000:
        raise HeapscopeError(f"--width must be 8..1000, not {args.width}")
    if args.plot:
        check_path(args.plot)
    if args.json:
        deprecated("timeline --json", "--format json")
        args.format = "json"
    profiles, without = load_timelines(args.profiles)
    for p in without:
        print(f"heapscope: {p.path}: no timeline samples, left out", file=sys.stderr)
    doc = document(profiles)
    if args.plot:
        write_timeline_plot(doc, args.plot)
    emit(args, doc, {"text": lambda d: render(d, width=args.width), "csv": render_csv})
    return 0
