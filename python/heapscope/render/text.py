"""Plain-text building blocks shared by the text renderers: numbers, sizes, tables."""
from typing import List, Sequence


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
