"""`heapscope html PROFILE|DIR [PROFILE|DIR] [-o FILE]`: one self-contained HTML report.

Wiring only: the documents come from analysis.page_documents (the analyses the text
reports use), the page from render.html.
"""
import os
import sys
from pathlib import Path

from heapscope.analysis.page_documents import CALLGRAPHS, collect
from heapscope.atomic import write_atomic
from heapscope.commands.options import non_negative
from heapscope.errors import HeapscopeError

DEFAULT_NAME = "heapscope-report.html"


def register(sub):
    p = sub.add_parser(
        "html", help="one offline HTML report: sizes, flame and call graphs, timelines, diff",
        description="Write one self-contained HTML file (scripts and data inlined: it opens "
                    "offline in any current browser, no server) with the overview and warnings, "
                    "the size x region table and heat map, flame graphs and call graphs of the "
                    "recorded stacks, lifetimes/peak/leaks (record --track), the heap/RSS/PSS "
                    "timeline (every rank of an MPI job) and, given two recordings, their diff. "
                    "Layout and libraries: docs/html-report.md.")
    p.add_argument("profiles", nargs="+", metavar="PROFILE|DIR",
                   help="a recording (profile files or a directory); a second one (B, after) "
                        "adds the comparison with the first (A, before)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help=f"the HTML file to write (default: {DEFAULT_NAME} next to the first "
                        f"input: inside it when it is a directory, beside it when a file; never "
                        f"the current directory unasked)")
    p.add_argument("--callgraphs", type=non_negative("--callgraphs"), default=CALLGRAPHS,
                   metavar="N", help=f"size and region groups whose call graph is drawn, most "
                                     f"allocations first (default {CALLGRAPHS}; graphviz `dot`)")
    p.set_defaults(func=run)


def output_path(args) -> Path:
    if args.output:
        return Path(args.output)
    first = Path(args.profiles[0])
    return (first if first.is_dir() else first.parent) / DEFAULT_NAME


def run(args):
    if len(args.profiles) > 2:
        raise HeapscopeError(f"html takes one recording, or two to compare (before, after); "
                             f"got {len(args.profiles)}: put one recording's files in a directory")
    after = [args.profiles[1]] if len(args.profiles) == 2 else None
    write_page([args.profiles[0]], after, output_path(args), args.callgraphs, sys.stdout)
    return 0


def write_page(before, after, out, callgraphs: int = CALLGRAPHS, say=sys.stderr,
               runs=None) -> None:
    """The page of recording `before` (paths), compared with `after` when given, to `out`;
    "wrote FILE" to `say`. Also the `--html FILE` of report, stacks, callgraph, diff and
    timeline (their result keeps stdout). runs: (runs of A, runs of B) for a diff over
    several runs per side (each run a path)."""
    from heapscope.commands import progress
    from heapscope.render.html import render_profile_page
    docs = progress.run("collecting the reports", collect, before, after, callgraphs=callgraphs,
                        runs=runs)
    processes = docs["report"]["processes"]
    exe = processes[0]["exe"] if processes else (docs["job"].get("executables") or [""])[0]
    program = os.path.basename(exe) or "program"
    title = f"heapscope: {program}" + (" (compared)" if after else "")
    write_atomic(str(out), progress.run("drawing the page", render_profile_page, docs, title))
    print(f"wrote {out}", file=say)
