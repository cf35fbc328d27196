"""`heapscope stacks FILE|DIR... --size SPEC`: the stack trace types of chosen sizes (locate)."""
from heapscope.analysis.selection import SizeSet
from heapscope.errors import HeapscopeError
from heapscope.profile import load_profiles
from heapscope.report import add_format_options, stacktypes, to_json
from heapscope.report.csvout import stacks_csv
from heapscope.report.output import emit
from heapscope.report.render_stacks import render


def register(sub):
    p = sub.add_parser(
        "stacks", help="stack trace types (distinct call paths) of chosen sizes, most frequent first",
        description="Print the stack trace types recorded for the chosen sizes (record them with "
                    "`heapscope record --sizes SPEC`), symbolized: each frame "
                    "`function @ file:line (module)`. Several profiles are merged by symbolized frames.")
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR", help="profile files or directories")
    p.add_argument("--size", required=True, metavar="SPEC", help='sizes, e.g. "12" or "12,24,100-200"')
    p.add_argument("--region", metavar="R", help="only this region (its path, or its name)")
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="stack trace types shown per size and region (default 10, 0 = all)")
    p.add_argument("--depth", type=int, default=0, metavar="N",
                   help="frames shown per type (default 0 = all recorded)")
    p.add_argument("--per-process", action="store_true",
                   help="the types of each process (then the merged ones)")
    p.add_argument("--full-names", action="store_true",
                   help="print C++ names whole (text output elides template arguments and "
                        "parameter lists, e.g. std::vector<...>::resize(...); JSON is always whole)")
    add_format_options(p)
    p.set_defaults(func=run)


def run(args):
    if args.top < 0 or args.depth < 0:
        raise HeapscopeError("--top and --depth must not be negative")
    sizes = SizeSet(args.size)
    profiles = load_profiles(args.profiles)
    doc = stacktypes.build(profiles, sizes, region=args.region, top=args.top, depth=args.depth,
                           per_process=args.per_process)
    if args.format == "json":
        text = to_json(doc)
    elif args.format == "csv":
        text = stacks_csv(doc)
    else:
        text = render(doc, full_names=args.full_names)
    emit(text, args.output)
    # Sizes asked for but not recorded: the output says how to record them; the exit says so too.
    return 1 if doc["not_recorded"] else 0
