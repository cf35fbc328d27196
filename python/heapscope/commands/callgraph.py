"""`heapscope callgraph`: merge the stack trace types of one size into a call graph and
rank the fix targets (step three of the method, characterize).

    heapscope callgraph run/ --size 12 --region local [--lines] [--top 20]
                        [--rank-by allocations|bytes] [--format text|json]
                        [-o FILE.txt|FILE.json] [--svg FILE.svg] [--dot FILE.dot]
                        [--max-drawn 60] [--dot-timeout 60]

Prints the ranking (text or JSON; -o FILE writes it to FILE instead) and draws the
graph only where asked: --dot FILE (graphviz text), --svg FILE (drawn by `dot`), or
--plot FILE whose suffix (.dot or .svg) says which. The ranking rules are in
docs/ranking.md. A drawing of a big graph keeps the ranked vertices and their paths
(--max-drawn, analysis/callgraph_view.py); `dot` gets --dot-timeout seconds: past them
it is stopped, the result is printed all the same, with a warning, and the exit status
is 1.

The old `-o PREFIX` (which wrote PREFIX.dot and PREFIX.svg and printed the result) still
works for one release, with a note: an -o value whose suffix is not .txt or .json is
read as that PREFIX. An -o ending in .dot or .svg is an error (say --dot or --svg).
"""
import argparse
from pathlib import Path
from typing import List, Optional, Tuple

from heapscope.analysis.callgraph import build_callgraph, document, shown
from heapscope.analysis.loading import lost_stack_warning
from heapscope.analysis.recorded import all_means_recorded
from heapscope.atomic import write_atomic
from heapscope.analysis.callgraph_view import DRAWN_LIMIT, view
from heapscope.commands.options import add_launchers_option
from heapscope.commands.options import (add_html_option, add_output_options, add_selection_options,
                                        add_top_option, deprecated, emit, non_negative)
from heapscope.commands import progress
from heapscope.commands.reading import selected_stacks, warnings
from heapscope.errors import HeapscopeError
from heapscope.render import callgraph_text
from heapscope.render.notes import collapse
from heapscope.render.callgraph_dot import DotTimeout, to_dot, write_svg
from heapscope.symbolize.packages import application_libraries

RESULT_SUFFIXES = (".txt", ".json")   # an -o with one of these is the result file
DOT_TIMEOUT = 60.0                    # seconds graphviz gets by default


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"bad --dot-timeout {text!r}: expected a number of "
                                         f"seconds above 0")
    return value
DRAWN_SUFFIXES = (".dot", ".svg")


def register(sub):
    p = sub.add_parser("callgraph", help="call graph of the stack trace types of a size; rank fix targets",
                       description=__doc__.split("\n\n")[0],
                       epilog="-o FILE.txt or FILE.json (or -o -) takes the result; an -o without "
                              "those suffixes is the old PREFIX: PREFIX.dot and PREFIX.svg, the "
                              "result on standard output (deprecated, a note says so).")
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR", help="profile files or directories (merged)")
    add_selection_options(p, size_required=True,
                          size_help="allocation size (or sizes: 12,24,100-200) whose stack types are merged",
                          region_help="only stack types recorded in this region")
    p.add_argument("--lines", action="store_true", help="vertices are source lines, not functions")
    p.add_argument("--rank-by", choices=("allocations", "bytes"), default="allocations",
                   help="rank fix targets by the allocations (default) or the bytes a fix "
                        "there would remove (docs/ranking.md)")
    add_top_option(p, "ranked vertices (listed and highlighted in the drawing)")
    add_output_options(p, ("text", "json"))
    add_launchers_option(p)
    p.add_argument("--dot", metavar="FILE.dot", help="write the graph in graphviz dot to FILE.dot")
    p.add_argument("--svg", metavar="FILE.svg", help="draw the graph into FILE.svg (needs graphviz `dot`)")
    p.add_argument("--max-drawn", type=non_negative("--max-drawn"), default=DRAWN_LIMIT, metavar="N",
                   help=f"vertices drawn at most: the ranked ones and their heaviest paths, the "
                        f"rest summed up in one box (default {DRAWN_LIMIT}, 0 = all; JSON has all)")
    p.add_argument("--dot-timeout", type=positive_seconds, default=DOT_TIMEOUT, metavar="SECONDS",
                   help=f"stop graphviz after SECONDS (default {DOT_TIMEOUT:g}); the result is "
                        f"printed all the same")
    p.add_argument("--plot", metavar="FILE.dot|FILE.svg",
                   help="draw the graph into FILE: .dot for graphviz text, .svg for the drawing")
    add_html_option(p, lambda a: (a.profiles, None))
    p.set_defaults(func=run)


def drawn_files(args) -> Tuple[Optional[str], Optional[Path], Optional[Path], bool]:
    """(where the result goes: a file or None for stdout, the .dot file, the .svg file,
    whether -o was the old PREFIX), from -o, --dot, --svg and --plot. With the old
    -o PREFIX the result goes to stdout, the drawing to PREFIX.dot and PREFIX.svg."""
    out, dot, svg = args.output, args.dot, args.svg
    suffix = Path(out).suffix.lower() if out and out != "-" else None
    if suffix in DRAWN_SUFFIXES:
        raise HeapscopeError(f"-o {out}: -o takes the result (FILE.txt or FILE.json); draw the "
                             f"graph with --{suffix[1:]} {out}")
    if suffix is not None and suffix not in RESULT_SUFFIXES:
        if dot or svg or args.plot:
            raise HeapscopeError(f"-o {out}: with --dot, --svg or --plot, -o takes the result "
                                 f"file and needs a .txt or .json suffix")
        return None, Path(out + ".dot"), Path(out + ".svg"), True
    if args.plot:
        kind = Path(args.plot).suffix.lower()
        if kind not in DRAWN_SUFFIXES:
            raise HeapscopeError(f"--plot {args.plot}: the suffix says what to draw, .dot or .svg")
        if (dot if kind == ".dot" else svg):
            raise HeapscopeError(f"--plot {args.plot} and --{kind[1:]} both name the {kind} file: "
                                 f"give one")
        dot, svg = (args.plot, svg) if kind == ".dot" else (dot, args.plot)
    return out, Path(dot) if dot else None, Path(svg) if svg else None, False


def run(args):
    result_path, dot_path, svg_path, old_prefix = drawn_files(args)
    unnamed: List[str] = []   # "this program has no symbols": said in the result, once
    profiles, sizes, stacks = selected_stacks(args, program_notes=unnamed)
    main_exe = profiles[0].exe if len({p.exe for p in profiles}) == 1 else ""
    with progress.phase(f"ranking {len(stacks):,} stack trace types"):
        g = build_callgraph(stacks, lines=args.lines, main_executable=main_exe, by=args.rank_by,
                            packaged_with=application_libraries)
    doc = document(g, args.top, args.size, args.region,
                   notes=collapse(unnamed, progress.VERBOSE))

    rc = 0
    if dot_path or svg_path:
        drawn = view(g, args.top, args.max_drawn)
        doc["drawn"] = dict(vertices=len(drawn.keep), hidden_vertices=drawn.hidden,
                            hidden_edges=drawn.hidden_edges)
        if drawn.hidden:
            doc["notes"].append(f"drawn: {len(drawn.keep)} of {len(g.vertices)} vertices (the "
                                f"ranked ones and their heaviest paths; --max-drawn 0 draws all)")
        dot_text = to_dot(g, callgraph_text.title(doc), highlight=len(shown(g, args.top)),
                          view=drawn)
        if dot_path:
            write_atomic(str(dot_path), dot_text)
            doc["dot"] = str(dot_path)
        if svg_path:
            try:
                with progress.phase(f"drawing {len(drawn.keep)} vertices with graphviz dot"):
                    note = write_svg(dot_text, svg_path, timeout=args.dot_timeout)
            except DotTimeout as exc:   # the result is still worth printing
                rc = 1
                warnings([f"{exc}; {svg_path} not written"])
                doc["notes"].append(f"{exc}; {svg_path} not written")
            else:
                if note and dot_path:   # the old wording: the .dot file is there
                    note = ("graphviz `dot` not found: wrote the .dot file only "
                            "(apt-get install graphviz)")
                if note:
                    doc["notes"].append(note)
                else:
                    doc["svg"] = str(svg_path)
    lost = lost_stack_warning(profiles)
    if lost:
        doc["notes"].append(lost)
    partial = all_means_recorded(profiles, sizes)
    if partial:
        doc["notes"].append(partial)

    prefix, args.output = args.output, result_path
    emit(args, doc, {"text": lambda d: callgraph_text.render(g, d, args.top)})
    if old_prefix:   # said last, so that an error above stays one line
        deprecated("callgraph -o PREFIX (an -o without a .txt or .json suffix)",
                   f"--dot {prefix}.dot --svg {prefix}.svg; -o FILE.txt or FILE.json "
                   f"writes the result")
    return rc
