"""Section 3, stack trace types: a flame graph per size and region (from the `stacks`
document) and the call graph of the groups with the most allocations, its ranked fix
targets highlighted (the callgraph's own dot drawing, run through graphviz now, with a
time bound, and inlined as SVG). A graph of more than MAX_DRAWN functions is drawn in
its ranked part (analysis.callgraph_view: the ranked vertices and their heaviest
paths), with a note saying how much is left out.

Frames repeat across stack types, so the page carries each distinct frame once (a
table) and the stack types as indices into it: the same document, smaller."""
from typing import Dict, List, Optional, Tuple

from heapscope.analysis.callgraph import ALLOC, CallGraph, document as callgraph_document
from heapscope.analysis.callgraph_view import DRAWN_LIMIT, View, view
from heapscope.analysis.stacks import frame_name
from heapscope.errors import HeapscopeError
from heapscope.render.callgraph_dot import draw_svg, to_dot
from heapscope.render.text import counted
from heapscope.symbolize import Frame
from heapscope.symbolize.names import short_name

ID, TITLE, SCRIPT = "stacks", "Stack trace types", "stacks.js"
DOT_SECONDS = 20        # per call graph; a graph dot cannot lay out in time is named, not drawn
DOT_BUDGET = 90         # for all of a page's call graphs together
TOP = 10                # fix targets listed and highlighted, as `heapscope callgraph`
MAX_DRAWN = 120         # functions in a graph the page draws whole; a bigger one, its ranked part
SVG_BUDGET = 3_000_000  # bytes of call-graph SVG in one page (the page aims at < 5 MB)


def frame_table(groups: List[dict]) -> Tuple[List[dict], List[dict]]:
    """(distinct frames with their display names, whole and short, groups whose stack types list frame indices)."""
    index: Dict[tuple, int] = {}
    table: List[dict] = []
    out = []
    for g in groups:
        types = []
        for t in g["stack_types"]:
            ids = []
            for f in t["frames"]:
                key = (f["function"], f["file"], f["line"], f["module"], f["offset"], f["inlined"])
                i = index.get(key)
                if i is None:
                    i = index[key] = len(table)
                    name = frame_name(Frame(**f))
                    table.append(dict(f, name=name, short=short_name(name)))
                ids.append(i)
            types.append(dict(t, frames=ids))
        out.append(dict(g, stack_types=types))
    return table, out


def title(size: int, region: str, g: CallGraph) -> str:
    return (f"size {size} in region {region}: {counted(g.types, 'stack trace type')}, "
            f"{counted(g.count, 'allocation')}, {counted(g.bytes, 'byte')}")


def callgraph_svg(g: CallGraph, heading: str, seconds: float,
                  part: Optional[View] = None) -> Tuple[Optional[str], Optional[str]]:
    """(svg text, None) or (None, why it is not drawn); `part`: only those vertices."""
    try:
        svg, note = draw_svg(to_dot(g, heading, highlight=TOP, view=part), "the call graph",
                             timeout=seconds)
    except HeapscopeError as exc:
        return None, str(exc)
    if svg is None:
        return None, note
    return svg[svg.find("<svg"):], None


def data(docs: dict) -> dict:
    stacks = docs["stacks"]
    if "absent" in stacks:
        return dict(absent=stacks["absent"])
    frames, groups = frame_table(stacks["groups"])
    graphs = []
    import time
    deadline = time.monotonic() + DOT_BUDGET
    svg_bytes = 0
    for c in docs["callgraphs"]:
        g: CallGraph = c["graph"]
        heading = title(c["size"], c["region"], g)
        doc = callgraph_document(g, TOP, str(c["size"]), c["region"])
        drawn = sum(v["kind"] != ALLOC for v in doc["vertices"])
        left = deadline - time.monotonic()
        command = f"heapscope callgraph INPUT --size {c['size']} --region '{c['region']}' --svg FILE"
        by_hand = f"`{command}` draws it"
        part = view(g, TOP, DRAWN_LIMIT) if drawn > MAX_DRAWN else None
        if svg_bytes > SVG_BUDGET:
            svg, note = None, f"not drawn: the page's call graphs are already large; {by_hand}"
        elif left < 1:
            svg, note = None, f"not drawn: the page's {DOT_BUDGET} s for graphviz were spent"
        else:
            svg, note = callgraph_svg(g, heading, min(DOT_SECONDS, left), part)
            svg_bytes += len(svg or "")
            if svg is not None and part is not None:
                note = (f"drawn in part: {len(part.keep)} of {len(g.vertices)} vertices, the "
                        f"ranked functions and their heaviest paths ({drawn} functions are more "
                        f"than a page shows); `{command} --max-drawn 0` draws it whole")
        graphs.append(dict(size=c["size"], region=c["region"], title=heading, svg=svg, note=note,
                           types=doc["types"], count=doc["count"], bytes=doc["bytes"],
                           vertices=drawn, edges=len(doc["edges"]), ranking=doc["ranking"],
                           patterns=doc["runtime_patterns"], wrappers=doc["wrappers"]))
    return dict(frames=frames, groups=groups, callgraphs=graphs, notes=stacks["notes"],
                not_recorded=stacks["not_recorded"], sampling=stacks.get("sampling"))
