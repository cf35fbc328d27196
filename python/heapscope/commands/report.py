"""`heapscope report FILE|DIR...`: exact allocation counts per size and region (identify)."""
from heapscope.analysis.selection import SizeSet
from heapscope.errors import HeapscopeError
from heapscope.profile import load_profiles
from heapscope.report import add_format_options, identify, to_json
from heapscope.report.csvout import report_csv
from heapscope.report.output import emit
from heapscope.report.render_report import render


def register(sub):
    p = sub.add_parser(
        "report", help="allocations per exact size and region, size groups, hot sizes, API calls",
        description="Print the size x region table of one or more profiles (files, or directories "
                    "of *.hsp files; several are merged unless --per-process), the size groups "
                    "(small <= 256 KiB, mid <= 1 MiB, large), the hot sizes of each region and the "
                    "calls per allocation function.")
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR", help="profile files or directories")
    p.add_argument("--region", metavar="R", help="only this region (its path, or its name)")
    p.add_argument("--size", metavar="SPEC", help='only these sizes in the table, e.g. "12,24,100-200"')
    p.add_argument("--min-count", type=int, default=0, metavar="N",
                   help="only sizes with at least N allocations in some region")
    p.add_argument("--top", type=int, default=0, metavar="N",
                   help="only the N sizes with the most allocations (listed most first)")
    p.add_argument("--hot", type=int, default=10, metavar="N",
                   help="hot sizes listed per region (default 10)")
    p.add_argument("--per-process", action="store_true",
                   help="one report per process (then the merged one)")
    add_format_options(p)
    p.set_defaults(func=run)


def run(args):
    for name in ("min_count", "top", "hot"):
        if getattr(args, name) < 0:
            raise HeapscopeError(f"--{name.replace('_', '-')} must not be negative")
    profiles = load_profiles(args.profiles)
    doc = identify.build(profiles, region=args.region, sizes=SizeSet(args.size),
                         min_count=args.min_count, top=args.top, hot=args.hot,
                         per_process=args.per_process)
    if args.format == "json":
        text = to_json(doc)
    elif args.format == "csv":
        text = report_csv(doc)
    else:
        text = render(doc)
    emit(text, args.output)
    return 0
