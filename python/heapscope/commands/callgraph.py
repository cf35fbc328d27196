"""`heapscope callgraph`: merge the stack trace types of one size into a call graph and
rank the fix targets (step three of the method, characterize).

    heapscope callgraph run/ --size 12 --region local [--lines] [--top 10] [-o PREFIX]

Prints the ranking (text or JSON) and writes PREFIX.dot and PREFIX.svg (graphviz).
The ranking rules are in heapscope.analysis.callgraph.
"""
import json
import sys
from pathlib import Path

from heapscope.analysis import classify as kinds
from heapscope.analysis.callgraph import ALLOC, CallGraph, build_callgraph, callers
from heapscope.analysis.callgraph_dot import render_svg, to_dot, write_atomically
from heapscope.analysis.loading import load, lost_stack_warning, require_stacks, weighted_stacks
from heapscope.analysis.selection import SizeSet
from heapscope.errors import HeapscopeError
from heapscope.render.text import counted


def register(sub):
    p = sub.add_parser("callgraph", help="call graph of the stack trace types of a size; rank fix targets",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("profiles", nargs="+", metavar="FILE|DIR", help="profile files or directories (merged)")
    p.add_argument("--size", required=True, metavar="SPEC",
                   help="allocation size (or sizes: 12,24,100-200) whose stack types are merged")
    p.add_argument("--region", metavar="R", help="only stack types recorded in this region")
    p.add_argument("--lines", action="store_true", help="vertices are source lines, not functions")
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="ranked vertices listed and highlighted (default 10; 0 = all)")
    p.add_argument("-o", "--output", metavar="PREFIX",
                   help="write PREFIX.dot and PREFIX.svg (default ./heapscope-callgraph-SIZE)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def _prefix(args) -> Path:
    if args.output:
        return Path(args.output)
    tag = args.size.replace(",", "_")
    if args.region:
        tag += "-" + args.region.replace("/", "_")
    return Path(f"heapscope-callgraph-{tag}")


def _vertex_json(v) -> dict:
    return dict(rank=v.rank, function=v.function, file=v.file, line=v.line, module=v.module,
                kind="trunk" if v.trunk else v.kind, types=v.types, count=v.count, bytes=v.bytes,
                distance=v.distance if v.kind != ALLOC else None)


def _title(args, g: CallGraph) -> str:
    where = f" in region {args.region}" if args.region else ""
    return (f"size {args.size}{where}: {counted(g.types, 'stack trace type')}, "
            f"{counted(g.count, 'allocation')}, {counted(g.bytes, 'byte')}")


def _print_text(args, g: CallGraph, top: list, files: list, notes: list) -> None:
    out = sys.stdout
    print(f"Call graph of {_title(args, g)}", file=out)
    drawn = len(g.vertices) - sum(v.kind == ALLOC for v in g.vertices.values())
    print(f"{counted(drawn, 'line' if g.lines else 'function')}, {counted(len(g.edges), 'call edge')}.",
          file=out)
    if not top:
        print("\nNo user-code vertex to rank: every frame is an entry point or runtime code.", file=out)
    else:
        print("\nFix targets (user code shared by the most paths; nearest the allocation first):", file=out)
        print(f"{'rank':>4} {'types':>6} {'allocations':>12} {'share':>6} {'bytes':>12} {'dist':>4}  vertex",
              file=out)
        for v in top:
            share = 100.0 * v.count / g.count if g.count else 0.0
            where = f" @ {v.file}:{v.line}" if g.lines and v.file else (f" @ {v.file}" if v.file else "")
            print(f"{v.rank:>4} {v.types:>6} {v.count:>12,} {share:>5.1f}% {v.bytes:>12,} {v.distance:>4}  "
                  f"{v.function}{where}", file=out)
            via = ", ".join(f"{g.vertices[e.caller].function} ({e.count:,})" for e in callers(g, v.key)[:4])
            if via:
                print(f"{'':>47}called from: {via}", file=out)
    unranked = {}
    for v in g.vertices.values():
        if not v.rank and v.kind != ALLOC:
            unranked.setdefault("trunk" if v.trunk else v.kind, []).append(v)
    labels = {kinds.ENTRY: ("entry point", ""), kinds.RUNTIME: ("runtime frame", ""),
              "trunk": ("trunk vertex", "trunk vertices"), kinds.USER: ("user vertex", "user vertices")}
    parts = [counted(len(vs), *labels.get(k, (k, ""))) for k, vs in sorted(unranked.items())]
    if "trunk" in unranked:
        parts[sorted(unranked).index("trunk")] += " (on every path before the first branch)"
    if parts:
        print(f"\nDrawn, not ranked: {', '.join(parts)}.", file=out)
    for f in files:
        print(f"wrote {f}", file=out)
    for n in notes:
        print(f"note: {n}", file=out)


def run(args):
    if args.top < 0:
        raise HeapscopeError("--top must be 0 (all) or a positive number")
    sizes = SizeSet(args.size)
    profiles = load(args.profiles)
    stacks = weighted_stacks(profiles, sizes, args.region)
    require_stacks(stacks, profiles, sizes, args.region)
    main_exe = profiles[0].exe if len({p.exe for p in profiles}) == 1 else ""
    g = build_callgraph(stacks, lines=args.lines, main_executable=main_exe)
    ranking = g.ranking
    top = ranking if args.top == 0 else ranking[:args.top]

    prefix = _prefix(args)
    if prefix.parent and not prefix.parent.exists():
        raise HeapscopeError(f"cannot write {prefix}.dot: directory {prefix.parent} does not exist")
    dot_path = prefix.with_name(prefix.name + ".dot")
    svg_path = prefix.with_name(prefix.name + ".svg")
    write_atomically(dot_path, to_dot(g, _title(args, g), highlight=len(top)))
    files = [str(dot_path)]
    notes = []
    note = render_svg(dot_path, svg_path)
    if note:
        notes.append(note)
    else:
        files.append(str(svg_path))
    lost = lost_stack_warning(profiles)
    if lost:
        notes.append(lost)

    if args.format == "json":
        doc = dict(format="heapscope-callgraph", version=1,
                   size=args.size, region=args.region, lines=args.lines, types=g.types,
                   count=g.count, bytes=g.bytes, ranking=[_vertex_json(v) for v in top],
                   vertices=[_vertex_json(v) for v in g.vertices.values()],
                   edges=[dict(caller=g.vertices[e.caller].function, callee=g.vertices[e.callee].function,
                               types=e.types, count=e.count, bytes=e.bytes) for e in g.edges.values()],
                   dot=str(dot_path), svg=str(svg_path) if not note else None, notes=notes)
        json.dump(doc, sys.stdout, indent=2)
        print()
    else:
        _print_text(args, g, top, files, notes)
    return 0
