"""`heapscope report FILE|DIR...`: what the profiles hold, in one of three views (--by).

  size     exact allocation counts per size and region (identify; analysis.identify,
           render.report_text, render.csv_tables)
  library  heap blocks per shared object that asked for them (analysis.by_library,
           render.library_text)
  rank     the job report of an MPI job's rank files (analysis.job): per-rank peaks,
           min/max/mean over ranks with rank and host, regions, timelines
Without --by: rank when the profiles are MPI ranks, else size.
"""
from heapscope.analysis import by_library, identify
from heapscope.analysis.hot_sizes import hot_sizes_document
from heapscope.analysis.job_loading import is_job
from heapscope.analysis.selection import SizeSet
from heapscope.commands.options import add_launchers_option
from heapscope.commands.options import (TOP_DEFAULT, add_html_option, add_output_options,
                                        add_selection_options, add_top_option, emit, non_negative)
from heapscope.analysis.loading import left_out_lines
from heapscope.render.json_text import to_json
from heapscope.errors import HeapscopeError
from heapscope.commands import progress
from heapscope.commands.reading import warnings, without_launchers
from heapscope.profile import load_profiles
from heapscope.render import library_text, report_text
from heapscope.render.csv_tables import library_csv, report_csv

VIEWS = ("size", "library", "rank")


def register(sub):
    p = sub.add_parser(
        "report", help="allocations per size and region, per library, or per MPI rank of a job",
        description="Report one or more profiles (files, or directories of *.hsp files). "
                    "--by size (default for single programs): the size x region table, size "
                    "groups (small <= 256 KiB, mid <= 1 MiB, large), hot sizes and calls per "
                    "allocation function, several profiles merged unless --per-process. "
                    "--by library: heap blocks per shared object that asked for them (needs "
                    "stacks: record with --sizes all). --by rank (default when the profiles are "
                    "the ranks of an MPI job): per-rank peaks of total, application and MPI "
                    "memory, min/max/mean over ranks with which rank on which host, per region, "
                    "and the per-rank and summed timelines (--plot).")
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR", help="profile files or directories")
    p.add_argument("--by", choices=VIEWS, help="the view (default: rank for an MPI job's files, "
                                               "else size)")
    add_selection_options(p, size_help='only these sizes, e.g. "12,24,100-200" '
                                       '(--by library: also lists them per library)')
    p.add_argument("--min-count", type=non_negative("--min-count"), default=0, metavar="N",
                   help="only sizes with at least N allocations in some region")
    add_top_option(p, "--by size: sizes, the most allocations first (with 0 every size, "
                      "in size order)")
    p.set_defaults(top=None)   # given or not: --top applies to --by size only
    p.add_argument("--hot", type=non_negative("--hot"), default=10, metavar="N",
                   help="hot sizes listed per region (default 10)")
    p.add_argument("--per-process", action="store_true",
                   help="one report per process (then the merged one)")
    p.add_argument("--hot-sizes-hint", action="store_true",
                   help="--by size: also the HSMALLOC_HOT_SIZES setting that gives the sizes taking "
                        "the largest shares of the allocations exact classes in hsmalloc")
    p.add_argument("--plot", metavar="FILE.png|FILE.svg",
                   help="--by rank: draw the per-rank and summed timelines into this file")
    p.add_argument("--ranks", type=non_negative("--ranks"), default=64, metavar="N",
                   help="--by rank: ranks listed in text (default 64, 0 = all)")
    p.add_argument("--points", type=int, default=200, metavar="N",
                   help="--by rank: time bins of the timelines (default 200)")
    add_output_options(p)
    add_launchers_option(p)
    add_html_option(p, lambda a: (a.profiles, None))
    p.set_defaults(func=run)


def run(args):
    if args.points < 1:
        raise HeapscopeError("--points must be at least 1")
    view = args.by
    profiles = None
    left_out: list = []      # (path, why): files that cannot be read, as the job report lists them
    if view is None:
        if is_job(args.profiles):
            view = "rank"
        else:
            profiles = progress.run("reading the profiles", load_profiles, args.profiles, left_out)
            # a rank killed by SIGKILL, in a file not named as a rank's: the job report
            # reads its timeline (and its own reading lists what is left out)
            if any(p.rank >= 0 for p in profiles) or any(_a_rank(path) for path, _ in left_out):
                view = "rank"
                profiles = None if left_out else profiles
            else:
                view = "size"
    _check_options(args, view)
    if view == "rank":
        return _job(args, profiles)
    if profiles is None:
        profiles = progress.run("reading the profiles", load_profiles, args.profiles, left_out)
    profiles = without_launchers(profiles, args)
    if view == "library":
        warnings(left_out_lines(left_out))
        return _library(args, profiles)
    top = TOP_DEFAULT if args.top is None else args.top
    doc = identify.build(profiles, region=args.region, sizes=SizeSet(args.size),
                         min_count=args.min_count, top=top, hot=args.hot,
                         per_process=args.per_process, left_out=left_out)
    if args.hot_sizes_hint:
        doc["hot_sizes_hint"] = hot_sizes_document(profiles)
    emit(args, doc, {"text": report_text.render, "csv": report_csv})
    return 0


def _a_rank(path: str) -> bool:
    """Whether a file without a snapshot is an MPI rank's (its PROCESS chunk says)."""
    from heapscope.profile.timeline import read_timeline
    try:
        return read_timeline(path).rank >= 0
    except HeapscopeError:
        return False


def _check_options(args, view):
    size_only = [o for o, on in (("--min-count", args.min_count), ("--top", args.top is not None),
                                 ("--per-process", args.per_process),
                                 ("--hot-sizes-hint", args.hot_sizes_hint)) if on]
    if view != "size" and size_only:
        raise HeapscopeError(f"{size_only[0]} applies to --by size; add --by size"
                             + (" for the size table of the ranks merged" if view == "rank" else ""))
    if view == "rank" and (args.size is not None or args.region is not None):
        raise HeapscopeError(f"{'--size' if args.size is not None else '--region'} applies to --by size and "
                             f"--by library; the job report covers every size and region")
    if view != "rank" and args.plot:
        raise HeapscopeError("--plot draws the timelines of the job report (--by rank)")


def _library(args, profiles):
    doc = by_library.build(profiles, sizes=SizeSet(args.size), region=args.region)
    emit(args, doc, {"text": library_text.render, "csv": library_csv})
    return 0


def _job(args, profiles):
    from heapscope.analysis import job
    from heapscope.analysis.job_loading import load_summaries, read_job
    from heapscope.render import job_text
    from heapscope.render.plots import write_job_plot
    job_file = None
    if profiles is not None:
        summaries = [job.summarize(p) for p in profiles]
    else:
        job_file = read_job(args.profiles)
        summaries = load_summaries(args.profiles, job=job_file)
    doc = job.build(summaries, timeline_points=args.points, job=job_file)
    if args.plot:
        write_job_plot(doc, args.plot)
    # compact JSON: indenting thousands of ranks' timelines takes 10x longer
    emit(args, doc, {"text": lambda d: job_text.render(d, max_ranks=args.ranks,
                                                       verbose=progress.VERBOSE),
                     "csv": job_text.render_csv, "json": lambda d: to_json(d, compact=True)})
    return 0
