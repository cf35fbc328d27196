"""`heapscope access FILE|DIR... [--by type|size]`: memory allocated and not used (record --access).

Per call path (or per size and region with --by size): blocks, bytes, the bytes on
pages the program read or wrote, the bytes it never touched (what could be given back:
the largest first), blocks never touched, blocks read before anything wrote them, and
how long after its allocation a block was first touched. Figures come from the sampled
blocks: estimates with 95% intervals. In an MPI job's directory, the job file adds every
rank's figures per size and region and per rank, the rank files kept their call paths.
Document: analysis/access.py; text and CSV: render/access_text.py.
"""
from heapscope.analysis import access
from heapscope.analysis.job_loading import read_job
from heapscope.analysis.processes import leave_out_launchers
from heapscope.errors import HeapscopeError
from heapscope.profile.job_file import is_job_file
from heapscope.commands.options import (add_html_option, add_launchers_option, add_output_options,
                                        add_selection_options, add_top_option, emit, non_negative)
from heapscope.commands.reading import read_profiles, symbolizer
from heapscope.render import access_text


def register(sub):
    p = sub.add_parser("access", help="memory allocated and not used, per call path (--access)",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR",
                   help="profiles recorded with `heapscope record --access`")
    add_selection_options(p)
    p.add_argument("--by", choices=["type", "size"], default="type",
                   help="one entry per call path (type, the default) or per size and region")
    add_top_option(p, "entries")
    p.add_argument("--depth", type=non_negative("--depth"), default=0, metavar="N",
                   help="frames shown per call path (default 0 = all recorded)")
    p.add_argument("--full-names", action="store_true",
                   help="print C++ names whole in text (JSON is always whole)")
    add_output_options(p)
    add_launchers_option(p)
    add_html_option(p, lambda a: (a.profiles, None))
    p.set_defaults(func=run)


def run(args):
    job = read_job(args.profiles)   # an MPI job's job file: every rank's figures
    files = [p for p in args.profiles if not is_job_file(p)]
    try:
        profiles = read_profiles(files, args) if files else []
    except HeapscopeError:
        if job is None:
            raise
        profiles = []               # the job file is all there is
    if job is not None and job.access and not args.launchers:   # the ranks are in the job file
        profiles, _ = leave_out_launchers(profiles, even_all=True)
    sym = symbolizer()
    doc = access.build(profiles, args.size, args.region, by=args.by, top=args.top,
                       depth=args.depth, symbolizer=sym, job=job)
    emit(args, doc, {"text": lambda d: access_text.render(d, full_names=args.full_names),
                     "csv": access_text.render_csv})
    return 0
