"""Plain-text building blocks shared by the text renderers: numbers, sizes, tables, and
the one sparkline (timelines, the job report, lifetime histograms)."""
from typing import List, Optional, Sequence


def num(n: int) -> str:
    """3584 -> "3,584"."""
    return f"{n:,}"


def counted(n: int, noun: str, plural: str = "") -> str:
    """counted(1, "block") -> "1 block"; counted(3000, "block") -> "3,000 blocks";
    counted(2, "process", "processes") -> "2 processes"."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def percent(share: float) -> str:
    """0.836 -> "83.6%"; a share too small to show with one decimal -> "<0.1%"."""
    if 0 < share < 0.0005:
        return "<0.1%"
    return f"{100 * share:.1f}%"


def table(header: Sequence[str], rows: List[Sequence[str]], left: int = 1, indent: str = "  ") -> str:
    """Columns padded to their widest cell; the first `left` columns left-aligned, the
    rest right-aligned (numbers)."""
    cells = [list(map(str, header))] + [list(map(str, r)) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for r in cells:
        parts = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append((indent + "  ".join(parts)).rstrip())
    return "\n".join(lines)


def shorten(items: Sequence[str], limit: int = 8) -> str:
    """"a, b, c" or "a, b, ... and 12 more"."""
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", ... and {len(items) - limit} more"


BLOCKS = "▁▂▃▄▅▆▇█"
ASCII_BLOCKS = "_.-:=+*#"     # where the terminal cannot show BLOCKS


def sparkline(values: Sequence[Optional[int]], width: int = 0, top: Optional[int] = None,
              low: Optional[int] = None, blocks: str = BLOCKS) -> str:
    """One character per value, None (no value) as a space.

    width > 0 first reduces the values to at most `width` cells, each the largest of its
    share of the values (so no peak is lost). Two scales:
      from zero (low None): 0 and below are a space, anything above shows at least the
        lowest block, `top` (default: the largest value) the highest: a rounding up, so a
        small value never vanishes;
      from `low`: `low` is the lowest block, `top` the highest, linear in between, so a
        change on top of a large base still shows."""
    if width > 0 and len(values) > width:
        n = len(values)
        values = [max(values[i * n // width:max((i + 1) * n // width, i * n // width + 1)])
                  for i in range(width)]
    present = [v for v in values if v is not None]
    if not present:
        return " " * len(values)
    steps = len(blocks) - 1
    if low is None:
        top = top or max(present) or 1
        return "".join(" " if v is None or v <= 0 else blocks[min(steps, (v * len(blocks) - 1) // top)]
                       for v in values)
    rise = (max(present) if top is None else top) - low
    return "".join(" " if v is None else blocks[(v - low) * steps // rise if rise else 0]
                   for v in values)
