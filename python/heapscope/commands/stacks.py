"""`heapscope stacks FILE|DIR... --size SPEC`: the stack trace types of chosen sizes (locate).

Document: analysis/stack_types.py; text: render/stacks_text.py; CSV: render/csv_tables.py.
"""
from heapscope.analysis import stack_types
from heapscope.analysis.selection import SizeSet
from heapscope.commands.options import add_launchers_option
from heapscope.commands.options import (add_html_option, add_output_options, add_selection_options,
                                        add_top_option, emit, non_negative)
from heapscope.commands import progress
from heapscope.commands.reading import read_profiles, symbolizer
from heapscope.render import stacks_text
from heapscope.render.csv_tables import stacks_csv


def register(sub):
    p = sub.add_parser(
        "stacks", help="stack trace types (distinct call paths) of chosen sizes, most frequent first",
        description="Print the stack trace types recorded for the chosen sizes (record them with "
                    "`heapscope record --sizes SPEC`), symbolized: each frame "
                    "`function @ file:line (module)`. Several profiles are merged by symbolized frames.")
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR", help="profile files or directories")
    add_selection_options(p, size_required=True)
    add_top_option(p, "stack trace types per size and region")
    p.add_argument("--depth", type=non_negative("--depth"), default=0, metavar="N",
                   help="frames shown per type (default 0 = all recorded)")
    p.add_argument("--per-process", action="store_true",
                   help="the types of each process (then the merged ones)")
    p.add_argument("--full-names", action="store_true",
                   help="print C++ names whole (text output elides template arguments and "
                        "parameter lists, e.g. std::vector<...>::resize(...); JSON is always whole)")
    add_output_options(p)
    add_launchers_option(p)
    add_html_option(p, lambda a: (a.profiles, None))
    p.set_defaults(func=run)


def run(args):
    sizes = SizeSet(args.size)
    profiles = read_profiles(args.profiles, args)
    doc = stack_types.build(profiles, sizes, region=args.region, top=args.top,
                            depth=args.depth, per_process=args.per_process, symbolizer=symbolizer())
    with progress.phase("writing the stack trace types"):
        emit(args, doc, {"text": lambda d: stacks_text.render(d, full_names=args.full_names,
                                                              verbose=progress.VERBOSE),
                         "csv": stacks_csv})
    # Sizes asked for but not recorded: the output says how to record them; the exit says so too.
    return 1 if doc["not_recorded"] else 0
