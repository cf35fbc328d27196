"""Collapsed stacks: one line per distinct path, "root;caller;...;callee VALUE".

The format flamegraph.pl, inferno and speedscope read. Frames are function names
(with `lines`, "function (file:line)"); inlined functions are frames of their own. The
value is allocations (`value="count"`) or bytes (`value="bytes"`). Optional root
pseudo-frames "region:NAME" and "size:N B" split the graph per region and size.
Lines are sorted, identical paths added up, so totals equal the stacks' totals.
"""
from typing import Dict, Iterable, List, Sequence, TextIO

from heapscope.analysis.stacks import WeightedStack, frame_name
from heapscope.errors import HeapscopeError

VALUES = ("count", "bytes")
ROOTS = ("region", "size")


def _clean(name: str) -> str:
    """';' separates frames and a line ends the record: neither may appear in a frame."""
    return name.replace(";", ":").replace("\n", " ").replace("\r", " ")


def frame_text(frame, lines: bool) -> str:
    name = frame_name(frame)
    if lines and frame.file:
        name = f"{name} ({frame.file}:{frame.line})"
    return _clean(name)


def collapse(stacks: Iterable[WeightedStack], value: str = "count", lines: bool = False,
             roots: Sequence[str] = ()) -> Dict[str, int]:
    """{"root;...;leaf": value} for the stacks."""
    if value not in VALUES:
        raise HeapscopeError(f"unknown value {value!r}: expected one of {', '.join(VALUES)}")
    bad = [r for r in roots if r not in ROOTS]
    if bad:
        raise HeapscopeError(f"unknown root frame {bad[0]!r}: expected region and/or size")
    out: Dict[str, int] = {}
    for s in stacks:
        parts: List[str] = []
        for r in roots:
            parts.append(_clean(f"region:{s.region}") if r == "region" else f"size:{s.size} B")
        parts.extend(frame_text(f, lines) for f in reversed(s.frames))
        if not parts:
            parts = ["[no frames]"]
        line = ";".join(parts)
        out[line] = out.get(line, 0) + (s.count if value == "count" else s.bytes)
    return out


def write_collapsed(stacks: Iterable[WeightedStack], out: TextIO, value: str = "count",
                    lines: bool = False, roots: Sequence[str] = ()) -> int:
    """Write the collapsed lines; returns the total value written."""
    collapsed = collapse(stacks, value, lines, roots)
    for line in sorted(collapsed):
        out.write(f"{line} {collapsed[line]}\n")
    return sum(collapsed.values())
