"""`heapscope timeline FILE|DIR... [--plot OUT.png|OUT.svg] [--json]`: heap in use, RSS and
PSS over the run, with the region spans and the MPI calipers.

Reads the TIMELINE chunks the recorder appends as the run goes, so a process killed
before its first snapshot (SIGKILL) shows its timeline up to the last flush. One file:
sparklines of heap, RSS and PSS with their peaks, and the regions; several files (or a
directory): one line per process.
"""
import argparse
import re
import sys

from heapscope.analysis.job_loading import profile_files
from heapscope.errors import HeapscopeError
from heapscope.profile.timeline import read_timeline
from heapscope.report import add_format_options, to_json
from heapscope.report.output import emit
from heapscope.report.timeline_summary import document
from heapscope.report.timeline_text import render, render_csv


DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|us)?\s*$")


def duration_ms(text: str) -> int:
    """argparse type of `record --timeline-interval`: "100ms", "2s", "0.5s", "250" (ms),
    "0" (off) -> whole milliseconds."""
    m = DURATION.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"bad duration {text!r}: expected e.g. 100ms, 2s or 0")
    value = float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1000.0, None: 1.0}[m.group(2)]
    ms = int(round(value))
    if value > 0 and (ms < 1 or abs(value - ms) > 1e-9):
        raise argparse.ArgumentTypeError(f"bad duration {text!r}: a whole number of "
                                         f"milliseconds >= 1 (or 0 for no timeline)")
    if ms > 86_400_000:
        raise argparse.ArgumentTypeError(f"bad duration {text!r}: at most a day")
    return ms


def register(sub):
    p = sub.add_parser("timeline", help="heap, RSS and PSS over time (sparklines, PNG/SVG, JSON)",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR", help="profile files or directories")
    p.add_argument("--plot", metavar="OUT.png|OUT.svg",
                   help="also draw the timeline into this file (format from the suffix)")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument("--width", type=int, default=60, metavar="N",
                   help="columns of the sparklines (default 60)")
    add_format_options(p)
    p.set_defaults(func=run)


def load(paths):
    """Profiles with a timeline; files without one are named on stderr (an error if none has)."""
    profiles, without = [], []
    for f in profile_files(paths):
        p = read_timeline(f)
        (profiles if p.timeline is not None and p.timeline.samples else without).append(p)
    if not profiles:
        which = without[0].path if len(without) == 1 else f"none of the {len(without)} profiles"
        if all(p.complete for p in without):
            why = "recorded with the timeline off (--timeline-interval 0 or HEAPSCOPE_TIMELINE_MS=0)"
        else:   # no snapshot: killed, maybe before the sampler's first flush
            why = ("killed before its first dump and before the timeline's first flush "
                   "(once a second, HEAPSCOPE_TIMELINE_FLUSH_MS), or recorded with the timeline off")
        raise HeapscopeError(f"{which}: no timeline samples: {why}")
    for p in without:
        print(f"heapscope: {p.path}: no timeline samples, left out", file=sys.stderr)
    profiles.sort(key=lambda p: (p.rank, p.start_real_ns, p.pid))
    return profiles


def run(args):
    if not 8 <= args.width <= 1000:
        raise HeapscopeError(f"--width must be 8..1000, not {args.width}")
    if args.json:
        args.format = "json"
    doc = document(load(args.profiles))
    if args.plot:
        from heapscope.report.timeline_plot import write_plot   # matplotlib, only here
        write_plot(doc, args.plot)
    if args.format == "json":
        out = to_json(doc)
    elif args.format == "csv":
        out = render_csv(doc)
    else:
        out = render(doc, width=args.width)
    emit(out, args.output)
    return 0
