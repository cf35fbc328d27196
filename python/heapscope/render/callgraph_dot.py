"""A CallGraph in Graphviz dot text (to_dot), and drawn to SVG by the `dot` program
(write_svg, with a time bound).

The first `highlight` ranked vertices (fix targets) are filled orange and bold with
their rank, the first one darkest; other ranked vertices show their rank. User code is
white (trunk dashed), runtime code grey, entry points blue, the allocation sinks red,
wrappers (seen through like the allocator) pale red and labelled "wrapper".
Edge width grows with the allocations through the edge. With a `view`
(analysis.callgraph_view) only its vertices are drawn, and one box says what is left
out.
"""
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional, Set, Tuple

from heapscope.analysis import classify as kinds
from heapscope.analysis.callgraph import ALLOC, CallGraph, Vertex, shown_kind
from heapscope.analysis.callgraph_view import View
from heapscope.atomic import write_atomic
from heapscope.errors import HeapscopeError

STYLE = {
    kinds.USER: 'fillcolor="white"',
    kinds.RUNTIME: 'fillcolor="#e4e4e4", fontcolor="#555555"',
    kinds.ENTRY: 'fillcolor="#d6e6f5"',
    ALLOC: 'fillcolor="#f4b6b6", shape=box3d',
}
TRUNK = 'fillcolor="white", style="rounded,filled,dashed"'
WRAPPER = 'fillcolor="#fbe3e3"'
RANKED = 'fillcolor="#ffc97a", penwidth=2, fontname="Helvetica-Bold"'
FIRST = 'fillcolor="#ff8c1a", penwidth=4, fontname="Helvetica-Bold"'


class DotTimeout(HeapscopeError):
    """`dot` did not finish in its time bound (it was stopped)."""


def quote(text: str) -> str:
    """A dot double-quoted string; newlines become centred line breaks."""
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{body}"'


def _shorten(name: str, width: int = 60) -> str:
    return name if len(name) <= width else name[:width - 3] + "..."


def _vertex_label(g: CallGraph, v: Vertex) -> str:
    parts = []
    if v.rank:
        parts.append(f"#{v.rank}")
    parts.append(_shorten(v.function))
    if v.wrapper:
        parts.append("wrapper")
    if g.lines and v.file:
        parts.append(f"{os.path.basename(v.file)}:{v.line}")
    parts.append(f"{v.types} type{'s' if v.types != 1 else ''}, {v.count:,} allocs")
    return "\n".join(parts)


def to_dot(g: CallGraph, title: str = "", highlight: int = 5, view: Optional[View] = None) -> str:
    keep: Optional[Set[tuple]] = view.keep if view is not None and not view.complete else None
    ids = {key: f"v{i}" for i, key in enumerate(g.vertices)}
    out = ["digraph heapscope_callgraph {",
           "  rankdir=TB;",
           f"  label={quote(title)}; labelloc=t; fontname=\"Helvetica\";",
           '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
           '  edge [color="#666666", fontname="Helvetica", fontsize=9];']
    for key, v in g.vertices.items():
        if keep is not None and key not in keep:
            continue
        style = TRUNK if v.trunk else WRAPPER if v.wrapper else STYLE.get(v.kind, STYLE[kinds.USER])
        if v.rank == 1:
            style = FIRST
        elif v.rank and v.rank <= highlight:
            style = RANKED
        tooltip = f"{v.function} ({shown_kind(v)})"
        out.append(f"  {ids[key]} [label={quote(_vertex_label(g, v))}, tooltip={quote(tooltip)}, {style}];")
    top = max((e.count for e in g.edges.values()), default=1) or 1
    for (caller, callee), e in g.edges.items():
        if keep is not None and (caller not in keep or callee not in keep):
            continue
        width = 1 + 4 * math.log1p(e.count) / math.log1p(top)
        out.append(f"  {ids[caller]} -> {ids[callee]} [label={quote(f'{e.count:,}')}, "
                   f"penwidth={width:.2f}];")
    if keep is not None:
        summary = (f"not drawn: {view.hidden:,} more vertices and {view.hidden_edges:,} edges\n"
                   f"(the ranked vertices and their heaviest paths are drawn;\n"
                   f"--format json lists everything, --max-drawn 0 draws everything)")
        out.append(f"  more [label={quote(summary)}, shape=note, style=filled, "
                   f"fillcolor=\"#f7f7f7\", fontcolor=\"#555555\"];")
    out.append("}")
    return "\n".join(out) + "\n"


def draw_svg(dot_text: str, what: str, timeout: float = 300) -> Tuple[Optional[str], Optional[str]]:
    """`dot_text` drawn by `dot -Tsvg` (the text on its standard input) in at most
    `timeout` seconds: (svg text, None), or (None, a one-line note) when graphviz is
    missing; a failing or overlong `dot` is an error (DotTimeout for the latter, one line).
    `what` names the drawing in those lines."""
    dot = shutil.which("dot")
    if dot is None:
        return None, f"graphviz `dot` not found: {what} not drawn (apt-get install graphviz)"
    try:
        res = subprocess.run([dot, "-Tsvg"], input=dot_text, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        raise DotTimeout(f"dot took over {timeout:g} s drawing {what}, stopped: draw fewer "
                         f"vertices (--max-drawn), fewer stack types (--region, one --size), or "
                         f"allow more time (--dot-timeout)") from None
    if res.returncode != 0:
        first = (res.stderr.strip().splitlines() or ["no message"])[0]
        raise HeapscopeError(f"dot failed drawing {what}: {first}")
    return res.stdout, None


def write_svg(dot_text: str, svg_path: Path, timeout: float = 300) -> Optional[str]:
    """Draw `dot_text` into `svg_path` (draw_svg). Returns None when drawn, or a one-line
    note when graphviz is missing."""
    directory = svg_path.parent
    if shutil.which("dot") is not None and not directory.is_dir():
        raise HeapscopeError(f"cannot write {svg_path}: directory {directory} does not exist")
    svg, note = draw_svg(dot_text, str(svg_path), timeout)
    if svg is None:
        return note
    write_atomic(str(svg_path), svg)
    return None
