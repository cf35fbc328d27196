"""`heapscope scaling DIR DIR DIR... [--predict N ...] [--limit 4GiB] [--by VAR]
[--by-library]`: one program recorded at several rank counts; each per-rank figure's law
of the rank count, predictions, where a memory limit is crossed, MPI libraries side by
side (analysis.scaling, render.scaling_text; the HTML page: render.html.scaling)."""
import os
import re
import sys

from heapscope.commands import progress
from heapscope.commands.options import add_output_options, emit, write_result
from heapscope.commands.reading import notes, symbolizer
from heapscope.errors import HeapscopeError

_BYTES = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]i?b?|b)?\s*$", re.I)
_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1000, "kib": 1024, "m": 1024 ** 2, "mb": 1000 ** 2,
          "mib": 1024 ** 2, "g": 1024 ** 3, "gb": 1000 ** 3, "gib": 1024 ** 3, "t": 1024 ** 4,
          "tb": 1000 ** 4, "tib": 1024 ** 4}


def register(sub):
    p = sub.add_parser(
        "scaling", help="per-rank memory against the rank count: laws, predictions, MPI libraries",
        description="Compare recordings of one MPI program at several rank counts (one "
                    "directory each, `heapscope record -o DIR -- mpirun -np N ...`): per rank "
                    "(the largest rank's) the heap, RSS and PSS peaks, the application's and the "
                    "MPI library's heap peaks and the MPI library's non-heap memory, each fitted "
                    "to the law of the rank count p that held-out checks choose (constant, 1/p, "
                    "log p, p, p log p, p^2, 1/p + p, 1/p + log p), predicted with 95% "
                    "intervals at larger rank counts, and the rank count where a rank would "
                    "exceed a memory limit; recorded with --track, the same per call path for "
                    "the largest stack types at the peak. Recordings under two MPI libraries are "
                    "fitted apart and their MPI memory set side by side. Method: docs/scaling.md.")
    p.add_argument("recordings", nargs="+", metavar="DIR",
                   help="one directory (or job file) per run, at two rank counts or more")
    p.add_argument("--predict", nargs="+", type=_ranks, metavar="N", default=None,
                   help="rank counts to predict (default: twice and four times the largest "
                        "measured)")
    p.add_argument("--limit", metavar="BYTES", default=None,
                   help="memory a rank may use, e.g. 4GiB or 3.5GB (default: this node's memory "
                        "per core); 0 = none")
    p.add_argument("--by", metavar="VAR", default=None,
                   help="a variable that sets the problem size (VAR=V, -VAR V or LAMMPS' "
                        "-var VAR V in the command line, or VAR=V in the directory's path): "
                        "each of its values is fitted apart")
    p.add_argument("--by-library", action="store_true",
                   help="also per module that asked for the blocks held at the ranks' peaks "
                        "(record --track)")
    p.add_argument("--html", metavar="FILE", dest="scaling_html",
                   help="also write an HTML page with the fitted curves and measured points")
    add_output_options(p)
    p.set_defaults(func=run)


def _ranks(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        import argparse
        raise argparse.ArgumentTypeError(f"bad --predict {text!r}: expected a rank count >= 1")
    return value


def parse_bytes(text: str) -> int:
    """'4GiB' -> 4294967296, '3.5GB' -> 3500000000, '512M' -> 536870912, '100' -> 100."""
    m = _BYTES.match(text)
    if not m:
        raise HeapscopeError(f"bad --limit {text!r}: expected bytes with an optional unit "
                             f"(KiB, MiB, GiB, TiB; kB, MB, GB, TB), like 4GiB")
    return round(float(m.group(1)) * _UNITS[(m.group(2) or "").lower()])


def node_memory_per_core():
    """(bytes, where from): MemTotal over the cores of this node."""
    try:
        with open("/proc/meminfo") as f:
            total = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
    except (OSError, StopIteration, ValueError):
        return None, "no limit: this node's memory is unknown (/proc/meminfo)"
    cores = os.cpu_count() or 1
    from heapscope.render.timeline_text import size
    return total // cores, f"this node's memory per core: {size(total)} over {cores} cores"


def run(args):
    from heapscope.analysis import scaling, scaling_runs
    from heapscope.render import scaling_text
    if len(args.recordings) < 2:
        raise HeapscopeError("scaling compares two recordings or more (one directory per rank "
                             "count); got one")
    if args.limit is None:
        limit, source = node_memory_per_core()
    else:
        limit = parse_bytes(args.limit) or None
        source = "--limit" if limit else ""
    sym = symbolizer()
    runs = []
    with progress.phase("reading the recordings"):
        for path in args.recordings:
            if not os.path.exists(path):
                raise HeapscopeError(f"{path}: no such file or directory")
            runs.append(scaling_runs.load_run(path, sym))
    scaling_runs.same_program(runs, args.by)
    targets = args.predict or scaling.default_targets(runs)
    doc = scaling.build(runs, targets, limit=limit, limit_source=source, by=args.by,
                        by_library=args.by_library)
    notes(sym.notes)
    emit(args, doc, {"text": lambda d: scaling_text.render(d, verbose=progress.VERBOSE),
                     "csv": scaling_text.render_csv})
    if args.scaling_html:
        from heapscope.render.html import render_scaling_page
        write_result(render_scaling_page(doc), args.scaling_html)
        print(f"heapscope: wrote {args.scaling_html}", file=sys.stderr)
    return 0
