"""What the tracking reports (lifetimes, temporaries, peak, leaks) share: their common
options, loading the tracked profiles, the document header, and text pieces.

    add_tracked_options(parser)                # FILE|DIR..., --size, --region, --top, --depth, ...
    profiles, entries, sym = load_tracked(args)
    doc.update(header(profiles, args, sym))   # processes, filters, tracking, notes
"""
from typing import List

from heapscope.analysis.loading import load
from heapscope.analysis.selection import SizeSet
from heapscope.analysis.tracked import (require_tracking, tracked_entries, tracking_notes,
                                        tracking_settings)
from heapscope.errors import HeapscopeError
from heapscope.report import add_format_options, to_json
from heapscope.report.output import emit
from heapscope.analysis.processes import describe
from heapscope.render.processes import header_lines
from heapscope.render.text import counted
from heapscope.symbolize import Frame, Symbolizer


def add_tracked_options(p, top_default: int = 10) -> None:
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR",
                   help="profiles recorded with `heapscope record --track` (or --trace)")
    p.add_argument("--size", metavar="SPEC", help='only these sizes, e.g. "12" or "12,24,100-200"')
    p.add_argument("--region", metavar="R", help="only this region (its path, or its name)")
    p.add_argument("--top", type=int, default=top_default, metavar="N",
                   help=f"stack trace types listed (default {top_default}, 0 = all)")
    p.add_argument("--depth", type=int, default=0, metavar="N",
                   help="frames shown per type (default 0 = all recorded)")
    p.add_argument("--full-names", action="store_true",
                   help="print C++ names whole in text (JSON is always whole)")
    add_format_options(p)


def load_tracked(args, per_process: bool = False):
    """(tracked profiles, selected entries merged over them, symbolizer)."""
    if args.top < 0 or args.depth < 0:
        raise HeapscopeError("--top and --depth must not be negative")
    sizes = SizeSet(args.size)
    profiles = require_tracking(load(args.profiles))
    sym = Symbolizer()
    entries = None if per_process else tracked_entries(profiles, sizes, args.region, sym)
    return profiles, entries, sym


def header(profiles, args, sym) -> dict:
    return dict(processes=[describe(p) for p in profiles],
                filters=dict(size=args.size or "all", region=args.region, top=args.top, depth=args.depth),
                tracking=tracking_settings(profiles), notes=tracking_notes(profiles, sym))


def header_text(title: str, doc: dict) -> List[str]:
    n = len(doc["processes"])
    out = [f"heapscope {title}: {n} process{'es' if n != 1 else ''}"]
    out += ["  " + line for line in header_lines(doc["processes"], n > 1)]
    t = doc["tracking"]
    out.append(f"  tracking  {'replayed from the event trace' if t['source'] == 'trace' else 'recorder tables'}"
               + (f", {counted(t['untracked'], 'block')} untracked" if t["untracked"] else ""))
    for note in doc["notes"]:
        out.append(f"  note      {note}")
    return out


def frame_lines(t: dict, full_names: bool, indent: str = "    ") -> List[str]:
    if not t["recorded"]:
        return [f"{indent}(no stack: this size was tracked without its stacks)"]
    out = [f"{indent}[{i}] {Frame(**f).text(short=not full_names)}" for i, f in enumerate(t["frames"])]
    hidden = t["frames_total"] - len(t["frames"])
    if hidden > 0:
        out.append(f"{indent}... {hidden} more frame{'s' if hidden != 1 else ''}")
    return out


def finish(args, doc: dict, text_fn, csv_fn) -> None:
    if args.format == "json":
        out = to_json(doc)
    elif args.format == "csv":
        out = csv_fn(doc)
    else:
        out = text_fn(doc, full_names=args.full_names)
    emit(out, args.output)
