"""The options the tracking reports (lifetimes, temporaries, peak, leaks) share, and
how their result is written.

    add_tracked_options(p)      FILE|DIR..., --size, --region, --top, --depth,
                                --full-names, --format, -o
    load(args)                  (profiles, entries, symbolizer) of the selection
    header(args, profiles, sym) the fields every tracking document starts with
    emit_tracked(args, doc, text, csv)
"""
from heapscope.analysis.tracked import document_header, load_tracked
from heapscope.commands.options import add_launchers_option
from heapscope.commands.options import (add_output_options, add_selection_options,
                                        add_top_option, emit, non_negative)
from heapscope.commands import progress
from heapscope.commands.reading import read_profiles


def add_tracked_options(p) -> None:
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR",
                   help="profiles recorded with `heapscope record --track` (or --trace)")
    add_selection_options(p)
    add_top_option(p, "stack trace types")
    p.add_argument("--depth", type=non_negative("--depth"), default=0, metavar="N",
                   help="frames shown per type (default 0 = all recorded)")
    p.add_argument("--full-names", action="store_true",
                   help="print C++ names whole in text (JSON is always whole)")
    add_output_options(p)
    add_launchers_option(p)


def load(args, per_process: bool = False):
    """(tracked profiles, selected entries merged over them, symbolizer)."""
    return load_tracked(read_profiles(args.profiles, args), args.size, args.region, per_process)


def header(args, profiles, sym) -> dict:
    return document_header(profiles, sym, size=args.size, region=args.region, top=args.top,
                           depth=args.depth)


def emit_tracked(args, doc: dict, text_fn, csv_fn) -> None:
    emit(args, doc, {"text": lambda d: text_fn(d, full_names=args.full_names, verbose=progress.VERBOSE),
                     "csv": csv_fn})
