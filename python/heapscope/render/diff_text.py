"""Text of `heapscope diff`: the totals of A and B, the (region, size) rows that changed
(biggest change first), the migrations, and with --stacks the stack trace types matched
by function/file/line and the call paths whose allocation size changed.

Takes the comparison of analysis.diff.compare (its Change rows keep the exact ratios).
"""
from typing import List

from heapscope.analysis.diff import VARIATION, Change
from heapscope.analysis.stacks import frame_name
from heapscope.render.text import counted

STACK_FRAMES_SHOWN = 6   # innermost frames of a stack trace type on its line
MIGRATION_SIZES_SHOWN = 5


def _ratio(c: Change) -> str:
    r = c.ratio
    if r is None:
        return "new" if c.count_b else "-"
    return f"{r:.3f}"


def _signed(n: int) -> str:
    return f"{n:+,}"


def _percent(c: Change, metric: str = "count") -> str:
    p = c.percent(metric)
    return "new" if p is None else f"{p:+.2f}%"


def stack_text(stack, depth: int = STACK_FRAMES_SHOWN) -> str:
    """The innermost user-visible frames, innermost first."""
    names = [frame_name(f) for f in stack.frames[:depth]]
    more = len(stack.frames) - depth
    return " <- ".join(names) + (f" <- ... ({more} more)" if more > 0 else "")


def _range(values) -> str:
    return f"{min(values):,}..{max(values):,}"


def render(result: dict, a: str, b: str, top: int) -> str:
    """`top` rows per table (0 = all)."""
    total, rows, migrations = result["total"], result["sizes"], result["migrations"]
    runs = result.get("runs", (1, 1))
    several = runs != (1, 1)
    out: List[str] = [
        f"A: {a} ({counted(result['processes'][0], 'process', 'processes')})   B: {b} "
        f"({counted(result['processes'][1], 'process', 'processes')})",
        f"Allocations: {total.count_a:,} -> {total.count_b:,} ({_signed(total.delta)}, {_percent(total)}); "
        f"bytes: {total.bytes_a:,} -> {total.bytes_b:,} ({_signed(total.bytes_delta)}, "
        f"{_percent(total, 'bytes')})"]
    if several:
        out += [f"Runs: A {runs[0]}, B {runs[1]}; before and after are their means, with each "
                f"side's lowest..highest run; a change whose ranges meet is {VARIATION}",
                f"Allocations per run: A {_range(total.runs.a)}, B {_range(total.runs.b)} "
                f"({total.status})"]
    changed = [r for r in rows if r.delta]
    shown = changed if top == 0 else changed[:top]
    if not rows:
        out += ["", "No allocation of the selection in A or in B: nothing to compare."]
    elif not changed:
        out += ["", f"No change: every size in every region has the same allocation count in A and B "
                    f"({counted(len(rows), 'row')})."]
    else:
        out += ["", f"Per size and region, biggest change first ({len(changed):,} changed, "
                    f"{len(rows) - len(changed):,} unchanged):"]
    if shown:
        w = max(8, max(len(r.region) for r in shown))
        spread = (f" {'A runs':>23} {'B runs':>23}" if several else "")
        out.append(f"{'region':<{w}} {'size':>10} {'before':>12} {'after':>12}{spread} {'delta':>12} "
                   f"{'ratio':>7} {'bytes delta':>14}  status")
        for r in shown:
            ranges = f" {_range(r.runs.a):>23} {_range(r.runs.b):>23}" if several else ""
            out.append(f"{r.region:<{w}} {r.size:>8} B {r.count_a:>12,} {r.count_b:>12,}{ranges} "
                       f"{_signed(r.delta):>12} {_ratio(r):>7} {_signed(r.bytes_delta):>14}  {r.status}")
        if len(shown) < len(changed):
            out.append(f"... {len(changed) - len(shown)} more (--top 0 shows all)")
    if migrations:
        out += ["", "Migrations (in one region, some sizes fell while others rose):"]
        for m in migrations:
            fell = ", ".join(f"{r.size} B ({_signed(r.delta)})" for r in m.fell[:MIGRATION_SIZES_SHOWN])
            rose = ", ".join(f"{r.size} B ({_signed(r.delta)})" for r in m.rose[:MIGRATION_SIZES_SHOWN])
            out.append(f"  {m.region}: fell {fell}; rose {rose}")
    if "stacks" in result:
        out += _stacks(result, top)
    return "\n".join(out) + "\n"


def _stacks(result: dict, top: int) -> List[str]:
    out: List[str] = []
    stacks = [s for s in result["stacks"] if s.delta and not s.unchanged]
    noise = sum(1 for s in result["stacks"] if s.delta and s.unchanged)
    several = result.get("runs", (1, 1)) != (1, 1)
    what = "run-to-run variation" if several else "sampling noise"
    within = f", {noise:,} within {what}" if noise else ""
    if not stacks and noise:
        out += ["", f"Stack trace types matched by function/file/line: no change beyond {what} "
                    f"({counted(len(result['stacks']), 'type')}: {noise:,} within "
                    f"{'the spread of their runs' if several else 'the noise of their estimates'}, "
                    f"{len(result['stacks']) - noise:,} the same)."]
    elif not stacks:
        out += ["", f"Stack trace types matched by function/file/line: no change (each of "
                    f"{counted(len(result['stacks']), 'type')} has the same count in A and B)."]
    else:
        out += ["", f"Stack trace types matched by function/file/line ({len(stacks):,} changed"
                    f"{within}, {len(result['stacks']) - len(stacks) - noise:,} unchanged):"]
    for s in (stacks if top == 0 else stacks[:top]):
        ranges = f" [A {_range(s.runs.a)}, B {_range(s.runs.b)}]" if several and s.runs else ""
        out.append(f"  {s.region} {s.size} B: {s.count_a:,} -> {s.count_b:,}{ranges} ({s.status})  "
                   f"{stack_text(s.stack)}")
    for m in result["path_migrations"]:
        before = ", ".join(f"{size} B x{c:,}" for size, c in m.before)
        after = ", ".join(f"{size} B x{c:,}" for size, c in m.after)
        out.append(f"  path changed size in {m.region}: {before} -> {after}: {stack_text(m.stack)}")
    return out
