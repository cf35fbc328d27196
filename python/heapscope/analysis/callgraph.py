"""Merge stack trace types into a call graph and rank the fix targets.

Vertices are functions (or source lines with `lines=True`), plus one sink vertex per
allocation size; an edge goes from caller to callee. Every vertex and edge carries how
many stack trace types, how many allocations and how many bytes pass through it (a
path that passes a vertex twice, through recursion, counts once).

Ranking (step three of the method of Gomes et al., "Memory allocation anomalies in
high-performance computing applications", made automatic): analysis/fix_targets.py, the
rule and its reasoning in docs/ranking.md. In short: user code only, by allocations
through the vertex (bytes on request), the number of paths as support, the trunk (on
>= 95% of its thread root's allocations above the first real branch) never, nearest the allocation
among equals. Runtime libraries that allocate per call of user code are named apart
(analysis/runtime_patterns.py).

`document` is the graph as plain data (the `heapscope callgraph --format json` layout,
docs/analysis-formats.md); render/callgraph_text.py and render/callgraph_dot.py draw it.
"""
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from heapscope.analysis import classify as kinds
from heapscope.analysis import fix_targets, runtime_patterns, wrappers
from heapscope.analysis.stacks import WeightedStack, frame_name, function_name
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
    repeats: int = 0              # allocations beyond the first of each path through it
    repeated_bytes: int = 0
    distance: int = 1 << 30       # fewest frames from the allocation call, over all paths
    trunk: bool = False
    wrapper: bool = False         # user code passing each call to one allocation (wrappers)
    driver: bool = False          # below the trunk, its paths branch and meet again (drivers)
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
    repeats: int = 0
    repeated_bytes: int = 0


@dataclass
class CallGraph:
    vertices: Dict[tuple, Vertex] = field(default_factory=dict)
    edges: Dict[Tuple[tuple, tuple], Edge] = field(default_factory=dict)
    types: int = 0
    count: int = 0
    bytes: int = 0
    lines: bool = False
    by: str = "allocations"       # what the ranking measures: allocations or bytes
    patterns: List[dict] = field(default_factory=list)   # analysis.runtime_patterns
    wrapper_sites: Dict[tuple, int] = field(default_factory=dict)   # wrapper vertex: call sites
    unnamed_program: bool = False  # the program has no symbols: its frames ranked by offset

    @property
    def ranking(self) -> List[Vertex]:
        return sorted((v for v in self.vertices.values() if v.rank), key=lambda v: v.rank)


def vertex_key(frame: Frame, lines: bool) -> tuple:
    """Functions are told apart by name and module (an unnamed one by where it starts,
    or by the frame's own offset when that is unknown); with lines, by function, file
    and line (an unnamed frame by its offset: its call site)."""
    if lines:
        return ("f", frame_name(frame), frame.module, frame.file, frame.line)
    return ("f", function_name(frame), frame.module)


def _sink(size: int) -> Vertex:
    label = f"{size} B allocations" if size else "allocations"
    return Vertex(("alloc", size), label, "", 0, "", ALLOC, distance=-1)


def build_callgraph(stacks: Sequence[WeightedStack], lines: bool = False,
                    main_executable: str = "", by: str = "allocations",
                    packaged_with: Optional[Callable] = None) -> CallGraph:
    """The merged call graph of `stacks` (merge identical types first: analysis.stacks),
    with its vertices ranked by `by` (allocations or bytes). packaged_with(program,
    libraries): those of the libraries built from the program's own source package
    (symbolize.packages.application_libraries), the application's code wherever they
    are installed."""
    if by not in fix_targets.MEASURES:
        raise ValueError(f"rank by {by!r}: one of {', '.join(fix_targets.MEASURES)}")
    g = CallGraph(lines=lines, by=by)
    apps = kinds.application_modules(stacks, main_executable)
    if packaged_with is not None and main_executable:
        apps |= set(packaged_with(main_executable, kinds.package_candidates(stacks, main_executable)))
    unnamed = kinds.unnamed_program(stacks, main_executable)
    root_paths: List[List[tuple]] = []       # vertex keys, outermost first
    root_functions: List[List[tuple]] = []   # the same frames as function keys
    function_of: Dict[tuple, tuple] = {}
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
                kind = kinds.classify_frame(frame, main_executable, apps, unnamed)
                if (unnamed and kind == kinds.USER and frame.module == main_executable
                        and kinds.program_start(stack.frames, depth)):
                    kind = kinds.ENTRY
                v = g.vertices[key] = Vertex(key, key[1], frame.file,
                                             frame.line if lines else 0, frame.module, kind)
            v.distance = min(v.distance, depth)
            path.append(key)
        _add_path(g, path, stack)
        functions = [vertex_key(f, False) for f in stack.frames]
        function_of.update(zip(path[1:], functions))
        root_paths.append(list(reversed(path[1:])))
        root_functions.append(functions[::-1])
    def user(frame) -> bool:
        return g.vertices[vertex_key(frame, lines)].kind == kinds.USER

    def application(frame) -> bool:   # user code, or an unnamed frame of the application's
        return user(frame) or (frame.function in ("", kinds.UNRESOLVED) and kinds.application_code(
            frame.module, main_executable, apps))

    found = wrappers.find(stacks, [fs[::-1] for fs in root_functions], user, application)
    for key, fkey in function_of.items():
        if fkey in found:
            g.vertices[key].wrapper = True
            g.wrapper_sites[key] = found[fkey]
    fix_targets.rank(g, root_paths, root_functions,
                     [fix_targets.measure(s, by) for s in stacks], by,
                     [(s.repeats, s.repeated_bytes) for s in stacks])
    g.patterns = runtime_patterns.find(stacks, main_executable, apps)
    g.unnamed_program = unnamed
    return g


def _add_path(g: CallGraph, path: List[tuple], stack: WeightedStack) -> None:
    repeats, repeated_bytes = stack.repeats, stack.repeated_bytes
    for key in set(path):
        v = g.vertices[key]
        v.types += 1
        v.count += stack.count
        v.bytes += stack.bytes
        v.repeats += repeats
        v.repeated_bytes += repeated_bytes
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
        e.repeats += repeats
        e.repeated_bytes += repeated_bytes


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


def shown_kind(v: Vertex) -> str:
    """The kind outputs show: trunk, wrapper, driver, or the frame's kind (user, runtime,
    entry, alloc)."""
    if v.trunk:
        return "trunk"
    return wrappers.WRAPPER if v.wrapper else "driver" if v.driver else v.kind


def vertex_json(v: Vertex) -> dict:
    # not ranked, no file or line (the function view): null, not 0 or ""
    return dict(rank=v.rank or None, function=v.function, file=v.file or None,
                line=v.line or None, module=v.module, kind=shown_kind(v), types=v.types,
                count=v.count, bytes=v.bytes, repeats=v.repeats,
                repeated_bytes=v.repeated_bytes,
                distance=v.distance if v.kind != ALLOC else None)


def wrappers_json(g: CallGraph) -> List[dict]:
    """The wrappers seen through, most allocations first."""
    found = sorted((g.vertices[key] for key in g.wrapper_sites), key=lambda v: (-v.count, v.key))
    return [dict(function=v.function, file=v.file or None, line=v.line or None, module=v.module,
                 types=v.types, count=v.count, bytes=v.bytes, call_sites=g.wrapper_sites[v.key])
            for v in found]


def document(g: CallGraph, top: int, size: str, region: Optional[str],
             notes: Sequence[str] = ()) -> dict:
    """The call graph and its ranking as plain data. `dot` and `svg` name the drawn files,
    `drawn` says how many vertices the drawing shows (None until a drawing is made: the
    command fills them in)."""
    return dict(format=CALLGRAPH_FORMAT, version=CALLGRAPH_VERSION,
                size=size, region=region, lines=g.lines, ranked_by=g.by, types=g.types,
                count=g.count, bytes=g.bytes, ranking=[vertex_json(v) for v in shown(g, top)],
                runtime_patterns=g.patterns, wrappers=wrappers_json(g),
                vertices=[vertex_json(v) for v in g.vertices.values()],
                edges=[dict(caller=g.vertices[e.caller].function,
                            callee=g.vertices[e.callee].function,
                            types=e.types, count=e.count, bytes=e.bytes) for e in g.edges.values()],
                dot=None, svg=None, drawn=None, notes=list(notes))
