"""Merge stack trace types into a call graph and rank the fix targets.

Vertices are functions (or source lines with `lines=True`), plus one sink vertex per
allocation size; an edge goes from caller to callee. Every vertex and edge carries how
many stack trace types, how many allocations and how many bytes pass through it (a
path that passes a vertex twice, through recursion, counts once).

Ranking (step three of the method of Gomes et al., "Memory allocation anomalies in
high-performance computing applications", made automatic): the vertices shared by the most
paths are where a fix pays most. Only user code is ranked (analysis.classify): entry
points and runtime frames are drawn, never ranked. Neither is the *trunk*: the user
functions every path goes through before the paths first branch (a phase driver called
from main is on every path, like main itself). The trunk is found on functions in both
views: with lines, every line vertex of a trunk function on the trunk is trunk too (a
driver's loop calling two kernels from two lines is still the driver). The last trunk
function is ranked only when the paths never meet again below the branch, because then it
is the one place they all share (with lines: its lines there). Order: more types, then
more allocations, then nearer the allocation (fewer frames between the vertex and the
allocation call), then name.

`document` is the graph as plain data (the `heapscope callgraph --format json` layout,
docs/analysis-formats.md); render/callgraph_text.py and render/callgraph_dot.py draw it.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from heapscope.analysis import classify as kinds
from heapscope.analysis.stacks import WeightedStack, frame_name
from heapscope.symbolize.frames import Frame

ALLOC = "alloc"   # kind of the sink vertices
CALLGRAPH_FORMAT = "heapscope-callgraph"
CALLGRAPH_VERSION = 1


@dataclass
class Vertex:
    key: tuple
    function: str
    file: str
    line: int
    module: str
    kind: str                     # classify.ENTRY / RUNTIME / USER, or ALLOC
    types: int = 0
    count: int = 0
    bytes: int = 0
    distance: int = 1 << 30       # fewest frames from the allocation call, over all paths
    trunk: bool = False
    rank: int = 0                 # 1 = first fix target; 0 = not ranked

    @property
    def label(self) -> str:
        return self.function


@dataclass
class Edge:
    caller: tuple
    callee: tuple
    types: int = 0
    count: int = 0
    bytes: int = 0


@dataclass
class CallGraph:
    vertices: Dict[tuple, Vertex] = field(default_factory=dict)
    edges: Dict[Tuple[tuple, tuple], Edge] = field(default_factory=dict)
    types: int = 0
    count: int = 0
    bytes: int = 0
    lines: bool = False

    @property
    def ranking(self) -> List[Vertex]:
        return sorted((v for v in self.vertices.values() if v.rank), key=lambda v: v.rank)


def vertex_key(frame: Frame, lines: bool) -> tuple:
    """Functions are told apart by name and module (by offset too when unnamed); with
    lines, by function, file and line."""
    name = frame_name(frame)
    if lines:
        return ("f", name, frame.module, frame.file, frame.line)
    return ("f", name, frame.module)


def _sink(size: int) -> Vertex:
    label = f"{size} B allocations" if size else "allocations"
    return Vertex(("alloc", size), label, "", 0, "", ALLOC, distance=-1)


def build_callgraph(stacks: Sequence[WeightedStack], lines: bool = False,
                    main_executable: str = "") -> CallGraph:
    """The merged call graph of `stacks` (merge identical types first: analysis.stacks),
    with its vertices ranked."""
    g = CallGraph(lines=lines)
    root_paths: List[List[tuple]] = []       # vertex keys, outermost first
    root_functions: List[List[tuple]] = []   # the same frames as function keys
    for stack in stacks:
        g.types += 1
        g.count += stack.count
        g.bytes += stack.bytes
        sink = _sink(stack.size)
        path = [g.vertices.setdefault(sink.key, sink).key]   # innermost first
        for depth, frame in enumerate(stack.frames):
            key = vertex_key(frame, lines)
            v = g.vertices.get(key)
            if v is None:
                kind = kinds.classify_frame(frame, main_executable)
                v = g.vertices[key] = Vertex(key, frame_name(frame), frame.file,
                                             frame.line if lines else 0, frame.module, kind)
            v.distance = min(v.distance, depth)
            path.append(key)
        _add_path(g, path, stack)
        root_paths.append(list(reversed(path[1:])))
        root_functions.append([vertex_key(f, False) for f in reversed(stack.frames)])
    _rank(g, root_paths, root_functions)
    return g


def _add_path(g: CallGraph, path: List[tuple], stack: WeightedStack) -> None:
    for key in set(path):
        v = g.vertices[key]
        v.types += 1
        v.count += stack.count
        v.bytes += stack.bytes
    seen = set()
    for callee, caller in zip(path, path[1:]):
        if caller == callee or (caller, callee) in seen:
            continue
        seen.add((caller, callee))
        e = g.edges.get((caller, callee))
        if e is None:
            e = g.edges[(caller, callee)] = Edge(caller, callee)
        e.types += 1
        e.count += stack.count
        e.bytes += stack.bytes


def _common_prefix(root_paths: List[List[tuple]]) -> List[tuple]:
    if not root_paths:
        return []
    prefix = []
    for keys in zip(*root_paths):
        if any(k != keys[0] for k in keys):
            break
        prefix.append(keys[0])
    return prefix


def _rank(g: CallGraph, root_paths: List[List[tuple]], root_functions: List[List[tuple]]) -> None:
    """root_paths: each stack's vertex keys, outermost first; root_functions: the same
    frames as function keys (equal to root_paths unless g.lines)."""
    shared = len(_common_prefix(root_functions))   # depths before the paths first branch
    user_depths = [d for d in range(shared) if g.vertices[root_paths[0][d]].kind == kinds.USER]
    for d in user_depths:
        for path in root_paths:
            g.vertices[path[d]].trunk = True
    candidates = [v for v in g.vertices.values() if v.kind == kinds.USER and not v.trunk]
    if user_depths and not any(v.types >= 2 for v in candidates):
        # The paths never meet again below the branch: where they last met is the target.
        last = {path[user_depths[-1]] for path in root_paths}
        for key in sorted(last):
            g.vertices[key].trunk = False
            candidates.append(g.vertices[key])
    candidates.sort(key=lambda v: (-v.types, -v.count, v.distance, v.function, v.file, v.line))
    for i, v in enumerate(candidates, 1):
        v.rank = i


def callers(g: CallGraph, key: tuple) -> List[Edge]:
    return sorted((e for e in g.edges.values() if e.callee == key), key=lambda e: -e.count)


def vertex(g: CallGraph, function: str) -> Optional[Vertex]:
    """The first vertex whose function is `function` (tests and scripting)."""
    for v in g.vertices.values():
        if v.function == function:
            return v
    return None


def shown(g: CallGraph, top: int) -> List[Vertex]:
    """The ranked vertices listed and highlighted: the first `top` (0 = all)."""
    ranking = g.ranking
    return ranking if top == 0 else ranking[:top]


def vertex_json(v: Vertex) -> dict:
    # not ranked, no file or line (the function view): null, not 0 or ""
    return dict(rank=v.rank or None, function=v.function, file=v.file or None,
                line=v.line or None, module=v.module,
                kind="trunk" if v.trunk else v.kind, types=v.types, count=v.count, bytes=v.bytes,
                distance=v.distance if v.kind != ALLOC else None)


def document(g: CallGraph, top: int, size: str, region: Optional[str],
             notes: Sequence[str] = ()) -> dict:
    """The call graph and its ranking as plain data. `dot` and `svg` name the drawn files
    (None until a drawing is written: the command fills them in)."""
    return dict(format=CALLGRAPH_FORMAT, version=CALLGRAPH_VERSION,
                size=size, region=region, lines=g.lines, types=g.types,
                count=g.count, bytes=g.bytes, ranking=[vertex_json(v) for v in shown(g, top)],
                vertices=[vertex_json(v) for v in g.vertices.values()],
                edges=[dict(caller=g.vertices[e.caller].function,
                            callee=g.vertices[e.callee].function,
                            types=e.types, count=e.count, bytes=e.bytes) for e in g.edges.values()],
                dot=None, svg=None, notes=list(notes))
