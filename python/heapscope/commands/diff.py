"""`heapscope diff A B`: compare two recordings per size, region and stack trace type.

    heapscope diff before/ after/ [--region local] [--size 12,24] [--stacks]
                   [--fail-if-more 5 [--metric count|bytes]] [--format text|json|csv]

A and B are profile files or directories (all their processes merged). Rows are per
(region, size): allocations and bytes before and after, delta and ratio; then the
migrations (sizes that fell and sizes that rose in one region). --stacks also matches
the stack trace types of A and B by symbolized frames (function, file, line). With
--fail-if-more PERCENT the exit status is 1, and one line on stderr says why, when the
total allocation count (--metric bytes: requested bytes) of the selection rose by more
than PERCENT; 0 otherwise. Other errors exit 2.
"""
import csv
import json
import math
import sys

from heapscope.analysis import diff as d
from heapscope.analysis.loading import load, region_paths, weighted_stacks
from heapscope.analysis.selection import SizeSet, check_region
from heapscope.analysis.stacks import frame_name
from heapscope.errors import HeapscopeError
from heapscope.render.text import counted
from heapscope.symbolize import Symbolizer

FIELDS = ["kind", "region", "size", "count_a", "count_b", "delta", "ratio", "bytes_a", "bytes_b",
          "bytes_delta", "status", "stack"]


def register(sub):
    p = sub.add_parser("diff", help="compare two recordings per size, region and stack type",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("a", metavar="A", help="profile file or directory: before")
    p.add_argument("b", metavar="B", help="profile file or directory: after")
    p.add_argument("--region", metavar="R", help="only this region")
    p.add_argument("--size", metavar="SPEC", help="only these sizes (12,24,100-200)")
    p.add_argument("--stacks", action="store_true",
                   help="also compare stack trace types (matched by function, file and line)")
    p.add_argument("--fail-if-more", type=float, metavar="PERCENT",
                   help="exit 1 when the total rose by more than PERCENT")
    p.add_argument("--metric", choices=d.METRICS, default="count",
                   help="what --fail-if-more compares: allocation count (default) or bytes")
    p.add_argument("--top", type=int, default=20, metavar="N",
                   help="text: rows shown per table (default 20; 0 = all)")
    p.add_argument("--format", choices=("text", "json", "csv"), default="text")
    p.set_defaults(func=run)


def _ratio(c: d.Change) -> str:
    r = c.ratio
    if r is None:
        return "new" if c.count_b else "-"
    return f"{r:.3f}"


def _signed(n: int) -> str:
    return f"{n:+,}"


def _percent(c: d.Change, metric="count") -> str:
    p = c.percent(metric)
    return "new" if p is None else f"{p:+.2f}%"


def _stack_text(stack, depth=6) -> str:
    """The innermost user-visible frames, innermost first."""
    names = [frame_name(f) for f in stack.frames[:depth]]
    more = len(stack.frames) - depth
    return " <- ".join(names) + (f" <- ... ({more} more)" if more > 0 else "")


def _print_text(args, result):
    total, rows, migrations = result["total"], result["sizes"], result["migrations"]
    print(f"A: {args.a} ({counted(result['processes'][0], 'process', 'processes')})   B: {args.b} "
          f"({counted(result['processes'][1], 'process', 'processes')})")
    print(f"Allocations: {total.count_a:,} -> {total.count_b:,} ({_signed(total.delta)}, {_percent(total)}); "
          f"bytes: {total.bytes_a:,} -> {total.bytes_b:,} ({_signed(total.bytes_delta)}, "
          f"{_percent(total, 'bytes')})")
    changed = [r for r in rows if r.delta]
    shown = changed if args.top == 0 else changed[:args.top]
    if not rows:
        print("\nNo allocation of the selection in A or in B: nothing to compare.")
    elif not changed:
        print(f"\nNo change: every size in every region has the same allocation count in A and B "
              f"({counted(len(rows), 'row')}).")
    else:
        print(f"\nPer size and region, biggest change first ({len(changed):,} changed, "
              f"{len(rows) - len(changed):,} unchanged):")
    if shown:
        w = max(8, max(len(r.region) for r in shown))
        print(f"{'region':<{w}} {'size':>10} {'before':>12} {'after':>12} {'delta':>12} {'ratio':>7} "
              f"{'bytes delta':>14}  status")
        for r in shown:
            print(f"{r.region:<{w}} {r.size:>8} B {r.count_a:>12,} {r.count_b:>12,} {_signed(r.delta):>12} "
                  f"{_ratio(r):>7} {_signed(r.bytes_delta):>14}  {r.status}")
        if len(shown) < len(changed):
            print(f"... {len(changed) - len(shown)} more (--top 0 shows all)")
    if migrations:
        print("\nMigrations (in one region, some sizes fell while others rose):")
        for m in migrations:
            fell = ", ".join(f"{r.size} B ({_signed(r.delta)})" for r in m.fell[:5])
            rose = ", ".join(f"{r.size} B ({_signed(r.delta)})" for r in m.rose[:5])
            print(f"  {m.region}: fell {fell}; rose {rose}")
    if args.stacks:
        stacks = [s for s in result["stacks"] if s.delta]
        if not stacks:
            print(f"\nStack trace types matched by function/file/line: no change (each of "
                  f"{counted(len(result['stacks']), 'type')} has the same count in A and B).")
        else:
            print(f"\nStack trace types matched by function/file/line ({len(stacks):,} changed, "
                  f"{len(result['stacks']) - len(stacks):,} unchanged):")
        for s in (stacks if args.top == 0 else stacks[:args.top]):
            print(f"  {s.region} {s.size} B: {s.count_a:,} -> {s.count_b:,} ({s.status})  "
                  f"{_stack_text(s.stack)}")
        for m in result["path_migrations"]:
            before = ", ".join(f"{size} B x{c:,}" for size, c in m.before)
            after = ", ".join(f"{size} B x{c:,}" for size, c in m.after)
            print(f"  path changed size in {m.region}: {before} -> {after}: {_stack_text(m.stack)}")


def _row(kind, c, region, size, stack=""):
    ratio = c.ratio
    return dict(kind=kind, region=region, size=size, count_a=c.count_a, count_b=c.count_b,
                delta=c.delta, ratio=None if ratio is None else round(ratio, 6), bytes_a=c.bytes_a,
                bytes_b=c.bytes_b, bytes_delta=c.bytes_delta, status=c.status, stack=stack)


def _frames_json(stack):
    return [dict(function=f.function, file=f.file, line=f.line, module=f.module, inlined=f.inlined)
            for f in stack.frames]


def _json(args, result, reason):
    t = result["total"]
    doc = dict(format="heapscope-diff", version=1,
               a=args.a, b=args.b, region=args.region, size=args.size, metric=args.metric,
               total=_row("total", t, "", 0), percent=dict(count=t.percent("count"), bytes=t.percent("bytes")),
               sizes=[_row("size", r, r.region, r.size) for r in result["sizes"]],
               migrations=[dict(region=m.region, fell=[dict(size=r.size, delta=r.delta) for r in m.fell],
                                rose=[dict(size=r.size, delta=r.delta) for r in m.rose])
                           for m in result["migrations"]],
               regression=reason)
    if args.stacks:
        doc["stacks"] = [dict(_row("stack", s, s.region, s.size), frames=_frames_json(s.stack))
                         for s in result["stacks"]]
        doc["path_migrations"] = [dict(region=m.region, before=[list(x) for x in m.before],
                                       after=[list(x) for x in m.after], frames=_frames_json(m.stack))
                                  for m in result["path_migrations"]]
    json.dump(doc, sys.stdout, indent=2)
    print()


def _csv(args, result):
    w = csv.DictWriter(sys.stdout, fieldnames=FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerow(_row("total", result["total"], "", ""))
    for r in result["sizes"]:
        w.writerow(_row("size", r, r.region, r.size))
    for s in result.get("stacks") or []:
        w.writerow(_row("stack", s, s.region, s.size, " <- ".join(frame_name(f) for f in s.stack.frames)))


def compare(args) -> dict:
    sizes = SizeSet(args.size)
    side_a, side_b = load([args.a]), load([args.b])
    check_region(region_paths(side_a) + region_paths(side_b), args.region)
    rows = d.size_changes(d.size_table(side_a, sizes, args.region), d.size_table(side_b, sizes, args.region))
    result = dict(processes=(len(side_a), len(side_b)), sizes=rows, total=d.totals(rows),
                  migrations=d.migrations(rows))
    if args.stacks:
        sym = Symbolizer()
        stacks_a = weighted_stacks(side_a, sizes, args.region, symbolizer=sym, notes_to=None, check=False)
        stacks_b = weighted_stacks(side_b, sizes, args.region, symbolizer=sym, notes_to=None, check=False)
        for note in sym.notes:
            print(f"heapscope: note: {note}", file=sys.stderr)
        if not stacks_a and not stacks_b:
            raise HeapscopeError("--stacks: neither A nor B holds stack trace types of the selection "
                                 "(record with `heapscope record --sizes SPEC`)")
        for side, stacks in (("A", stacks_a), ("B", stacks_b)):
            if not stacks:
                print(f"heapscope: warning: {side} holds no stack trace types of the selection", file=sys.stderr)
        result["stacks"] = d.stack_changes(stacks_a, stacks_b)
        result["path_migrations"] = d.path_migrations(stacks_a, stacks_b)
    return result


def run(args):
    limit = args.fail_if_more
    if limit is not None and not (math.isfinite(limit) and limit >= 0):
        # nan compares false and inf is never exceeded: either would silently turn the check off
        raise HeapscopeError(f"--fail-if-more takes a finite percentage >= 0, not {limit:g}")
    if args.top < 0:
        raise HeapscopeError("--top must be 0 (all) or a positive number")
    result = compare(args)
    reason = (d.regression(result["total"], args.fail_if_more, args.metric)
              if args.fail_if_more is not None else None)
    if args.format == "json":
        _json(args, result, reason)
    elif args.format == "csv":
        _csv(args, result)
    else:
        _print_text(args, result)
    if reason:
        sys.stdout.flush()
        print(f"heapscope: diff: regression: {reason}", file=sys.stderr)
        return 1
    return 0
