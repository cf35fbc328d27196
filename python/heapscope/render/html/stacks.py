"""Section 3, stack trace types: a flame graph per size and region (from the `stacks`
document) and the call graph of the groups with the most allocations, its ranked fix
targets highlighted (the callgraph's own dot drawing, run through graphviz now, with a
time bound, and inlined as SVG). A graph of more than MAX_DRAWN functions is drawn in
its ranked part (analysis.callgraph_view: the ranked vertices and their heaviest
paths), with a note saying how much is left out.

Frames repeat across stack types, so the page carries each distinct frame once (a
table of the names and source lines it shows) and the stack types as indices into it.

Bounded: the MAX_GROUPS size and region groups with the most allocations are carried,
each with the stack types (the most allocations first) that fit a budget of frames
spent on the busiest groups first, and what the rest of its types add up to; the other
groups are counted in `folded`. Every group's count is whole; `heapscope stacks
--format json` lists every type."""
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
SVG_BUDGET = 1_500_000  # bytes of call-graph SVG in one page (a page stays under 5 MB)
MAX_GROUPS = 80         # size and region groups carried (the most allocations first)
FRAME_BUDGET = 250_000  # frames of the stack types carried, all groups together
MIN_TYPES = 5           # stack types every carried group shows, whatever the budget


def frame_table(groups: List[dict]) -> Tuple[List[dict], List[dict]]:
    """(distinct frames as the page shows them: name, short name when it differs, source
    file and line; groups whose stack types list frame indices)."""
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
                    short = short_name(name)
                    row = dict(name=name, file=f["file"], line=f["line"])
                    if short != name:
                        row["short"] = short
                    table.append(row)
                ids.append(i)
            types.append(dict(t, frames=ids))
        out.append(dict(g, stack_types=types))
    return table, out


def carried(groups: List[dict]) -> Tuple[List[dict], dict]:
    """(the MAX_GROUPS groups with the most allocations, in the document's order, each
    with its stack types within the page's budget of FRAME_BUDGET frames (the busiest
    groups first, at least MIN_TYPES types each) and `more`: the types it has beyond
    those and their allocations and bytes; what the other groups add up to)."""
    ranked = sorted(groups, key=lambda g: (-g["count"], g["size"], g["region"]))
    budget = FRAME_BUDGET
    shown: Dict[int, int] = {}
    for g in ranked[:MAX_GROUPS]:
        n = 0
        for t in g["stack_types"]:
            if n >= MIN_TYPES and len(t["frames"]) > budget:
                break
            budget -= len(t["frames"])
            n += 1
        shown[id(g)] = n
    kept, folded = [], dict(groups=0, count=0, bytes=0)
    for g in groups:
        if id(g) not in shown:
            folded["groups"] += 1
            folded["count"] += g["count"]
            folded["bytes"] += g["bytes"]
            continue
        types = g["stack_types"][:shown[id(g)]]
        n = g["types"] - len(types)
        more = None if n <= 0 else dict(
            types=n, count=g["count"] - sum(t["count"] for t in types),
            bytes=g["bytes"] - sum(t["bytes"] for t in types))
        kept.append(dict(g, stack_types=types, more=more))
    return kept, folded


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
    kept, folded = carried(stacks["groups"])
    frames, groups = frame_table(kept)
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
    # (the stacks' notes are the overview's, said once for the page)
    return dict(frames=frames, groups=groups, callgraphs=graphs, folded=folded,
                inputs=docs.get("inputs") or ["INPUT"],
                not_recorded=stacks["not_recorded"], sampling=stacks.get("sampling"))
