"""Which vertices of a call graph are the fix targets, in which order (docs/ranking.md).

A fix at a vertex removes the allocations that pass through it, beyond the first of each
path (`repetition`: six call sites allocating once each are set-up, one call site
allocating many times is the anomaly); bytes with `by="bytes"`. The allocations through
it, then the number of paths (stack trace types), break ties. Only user code is ranked
(analysis.classify), never a wrapper (analysis.wrappers: seen through like the
allocator), never the trunk.

The trunk: walk the calling-context tree from its root, following the callee that
carries at least TRUNK_SHARE of all allocations; the functions passed are trunk, up to
the first real branch (no callee carries that share). A stray path (one input-reading
call that bypasses the driver) leaves the walk on its way: it cannot turn a driver on
99% of the allocations into a fix target. The walk is made per thread root (the main
thread's from the program's start, each worker's from its start routine, against its own
root's total: analysis.stack_roots, which also completes stacks cut short by the depth
limit), so worker threads do not end the main thread's trunk.

The last user function of the trunk (where the paths branch) is ranked only when every
path reaches the allocation through at most the one function it calls: then it is the
one place a fix reaches them all (assembleLocal calling the element matrix and load
vector helpers). When a branch passes two user functions or more, it is a subsystem
with its own loop and targets, and the trunk's end is a driver (FreeFem's
AssembleVarForm, gmsh's GenerateMesh, LAMMPS' constructor).

Below the trunk, the drivers (analysis.drivers: functions whose paths branch and meet
again in user code) are not ranked either, and the repetition a vertex is ranked by
leaves out the paths on which a driver lies below it: what the driver's subsystems
repeat is decided there.

Among equals, the vertex nearest the allocation first: a caller whose allocations pass
(through a chain of dominant calls) for at least FOCUS_SHARE into one ranked callee that
carries no more than they do (within the same share) ranks right after that callee (a
fix in `timestep()` is the fix in the `mesh_refine()` it calls for 99% of its
allocations; the callee is where the code allocates), however their distances to the
allocation compare.
"""
from typing import Dict, List, Sequence, Set, Tuple

from heapscope.analysis import classify as kinds, drivers, stack_roots

TRUNK_SHARE = 0.95
FOCUS_SHARE = 0.95
MEASURES = ("allocations", "bytes")


def measure(item, by: str) -> int:
    """What reaches the allocation through a vertex, an edge or a stack: allocations or bytes."""
    return item.bytes if by == "bytes" else item.count


def repetition(item, by: str) -> int:
    """What a fix there removes: the allocations (bytes) beyond the first of each path."""
    return item.repeated_bytes if by == "bytes" else item.repeats


def _ranked_user(v) -> bool:
    """User code that may be ranked: not a wrapper (seen through like the allocator)."""
    return v.kind == kinds.USER and not v.wrapper


def trunk_walk(root_functions: Sequence[Sequence[tuple]], weights: Sequence[int]) -> List[tuple]:
    """The function keys of the trunk, outermost first: from the root, the callee carrying
    at least TRUNK_SHARE of the total weight, while there is one."""
    total = sum(weights)
    if total <= 0:
        return []
    following = [i for i, path in enumerate(root_functions) if path]
    walk: List[tuple] = []
    depth = 0
    while following:
        by_key: Dict[tuple, int] = {}
        for i in following:
            path = root_functions[i]
            if depth < len(path):
                by_key[path[depth]] = by_key.get(path[depth], 0) + weights[i]
        if not by_key:
            break
        key = max(by_key, key=lambda k: (by_key[k], k))
        if by_key[key] < TRUNK_SHARE * total:
            break
        walk.append(key)
        following = [i for i in following
                     if depth < len(root_functions[i]) and root_functions[i][depth] == key]
        depth += 1
    return walk


def rank(g, root_paths: Sequence[Sequence[tuple]], root_functions: Sequence[Sequence[tuple]],
         weights: Sequence[int], by: str = "allocations",
         repeated: Sequence[Tuple[int, int]] = ()) -> None:
    """Mark g's trunk vertices and number its fix targets (Vertex.trunk, Vertex.rank).
    root_paths: each stack's vertex keys, outermost first; root_functions: the same frames
    as function keys (equal to root_paths unless g.lines); weights: each stack's measure;
    repeated: each stack's (repeats, repeated bytes), by which vertices are ranked
    (_decided_below_no_driver).

    The trunk is walked per root (stack_roots): the main thread's stacks from the
    program's start, each worker thread's from its start routine, each against its own
    root's total, so that a worker allocating 6% does not end the main thread's trunk at
    its first frame. A function is trunk when at least TRUNK_SHARE of the allocations
    through it pass it where it is on its root's trunk: a worker's driver that the main
    thread also calls below its branch (a mesher's face loop run by both) stays ranked."""
    function_of = _function_keys(g, root_paths, root_functions)
    rankable = {fkey for key, fkey in function_of.items() if _ranked_user(g.vertices[key])}
    members: Dict[tuple, List[int]] = {}
    stack_root, walked_paths, walked_functions = stack_roots.aligned(g, root_paths, root_functions,
                                                                     weights)
    for i, root in enumerate(stack_root):
        members.setdefault(root, []).append(i)
    walks = []            # (paths, functions, walk, user depths) of each root with a user trunk
    on_trunk: Dict[tuple, int] = {}
    for root, indices in members.items():
        paths = [walked_paths[i] for i in indices]
        functions = [walked_functions[i] for i in indices]
        walk = trunk_walk(functions, [weights[i] for i in indices])
        user_depths = [d for d, key in enumerate(walk) if key in rankable]
        if not user_depths:
            continue
        walks.append((paths, functions, walk, user_depths))
        trunk_here = {walk[d] for d in user_depths}
        for i, fs in zip(indices, functions):
            for fkey in trunk_here.intersection(fs):
                on_trunk[fkey] = on_trunk.get(fkey, 0) + weights[i]
    through: Dict[tuple, int] = {}
    for fs, w in zip(walked_functions, weights):
        for fkey in on_trunk.keys() & set(fs):
            through[fkey] = through.get(fkey, 0) + w
    trunk_functions = {f for f, w in on_trunk.items() if w >= TRUNK_SHARE * through[f]}
    for key, v in g.vertices.items():
        if _ranked_user(v) and function_of.get(key) in trunk_functions:
            v.trunk = True
    below_trunk = drivers.find(root_functions, weights, rankable - trunk_functions)
    for key, v in g.vertices.items():
        v.driver = _ranked_user(v) and not v.trunk and function_of.get(key) in below_trunk
    candidates = [v for v in g.vertices.values() if _ranked_user(v) and not v.trunk
                  and not v.driver]
    if repeated:
        _decided_below_no_driver(g, root_paths, repeated)
    ends: List[tuple] = []
    for paths, functions, walk, user_depths in walks:
        last = user_depths[-1]
        if walk[last] in trunk_functions and not _trunk_end_is_a_driver(g, paths, functions, walk):
            # Every branch is one helper the trunk's end calls: the trunk's end is the target.
            followers = [i for i, path in enumerate(functions) if path[:last + 1] == walk[:last + 1]]
            ends.extend(key for key in sorted({paths[i][last] for i in followers})
                        if key not in ends)
    for key in ends:
        g.vertices[key].trunk = False
        candidates.append(g.vertices[key])
    ranked = {v.key for v in candidates}
    focus = _focus(g, ranked, by)

    def weight(v):
        return (-repetition(v, by), -measure(v, by), -v.types)

    def order(v):
        # an equal counts as far from the allocation as its callee plus the calls up to
        # it: right after the callee, whatever its own shortest path; of two patterns as
        # heavy, the places nearest the allocation before the callers of either
        target, hops = focus[v.key]
        head = g.vertices[target]
        return (weight(head), head.distance + hops, hops, weight(v), v.function, v.file, v.line)

    candidates.sort(key=order)
    for i, v in enumerate(candidates, 1):
        v.rank = i


def _decided_below_no_driver(g, root_paths, repeated) -> None:
    """Each vertex's and edge's repetition (Vertex.repeats, .repeated_bytes) counted over
    the paths on which no driver lies below it: what a driver's subsystems repeat is
    decided there, not in the driver's callers (Octave's for-loop runner carries the
    whole loop body, through the statement dispatcher, and only its loop variable is its
    own). Allocation sinks keep what the graph counted."""
    for v in g.vertices.values():
        if v.kind != "alloc":
            v.repeats = v.repeated_bytes = 0
    for e in g.edges.values():
        if g.vertices[e.callee].kind != "alloc":
            e.repeats = e.repeated_bytes = 0
    for path, (repeats, repeated_bytes) in zip(root_paths, repeated):
        seen = set()
        callee = None
        for key in reversed(path):             # innermost first, as the graph's edges
            if callee is not None and callee != key and (key, callee) not in seen:
                seen.add((key, callee))
                e = g.edges[(key, callee)]
                e.repeats += repeats
                e.repeated_bytes += repeated_bytes
            if key not in seen:
                seen.add(key)
                v = g.vertices[key]
                v.repeats += repeats
                v.repeated_bytes += repeated_bytes
                if v.driver:
                    break
            callee = key


def _function_keys(g, root_paths, root_functions) -> Dict[tuple, tuple]:
    out: Dict[tuple, tuple] = {}
    for path, functions in zip(root_paths, root_functions):
        for key, fkey in zip(path, functions):
            out[key] = fkey
    return out


def _trunk_end_is_a_driver(g, root_paths, root_functions, walk) -> bool:
    """Whether a path that follows the whole trunk passes two user functions or more below
    it (wrappers aside): then its branches are subsystems, each with the loop that
    repeats inside it and targets of its own (FreeFem's AssembleVarForm calling the
    bilinear and linear assembly loops, which call the element routines; gmsh's
    GenerateMesh), and the trunk's end is a driver. When every path reaches the
    allocation through at most the function the trunk's end calls (assembleLocal calling
    the element matrix and load vector helpers; the paper's getElem building an
    element's nodes and edges), the trunk's end is the one place a fix reaches them all."""
    depth = len(walk)
    for path, functions in zip(root_paths, root_functions):
        if list(functions[:depth]) != walk or len(functions) <= depth:
            continue
        below = [key for key in dict.fromkeys(path[depth:]) if _ranked_user(g.vertices[key])]
        if len(below) > 1:
            return True
    return False


def _focus(g, ranked: Set[tuple], by: str) -> Dict[tuple, Tuple[tuple, int]]:
    """For each ranked vertex, its equal nearest the allocation and how many calls down it
    is: the ranked vertex reached through a chain of calls carrying at least FOCUS_SHARE
    of its repetition (allocations beyond the first of each path), and carrying itself
    no more than that ((itself, 0) when there is none)."""
    out_edges: Dict[tuple, list] = {}
    for e in g.edges.values():
        out_edges.setdefault(e.caller, []).append(e)
    focus: Dict[tuple, Tuple[tuple, int]] = {}

    def follow(key: tuple, visiting: Set[tuple]) -> Tuple[tuple, int]:
        if key in focus:
            return focus[key]
        visiting.add(key)
        need = FOCUS_SHARE * repetition(g.vertices[key], by)
        cur, seen, steps = key, {key}, 0
        result = (key, 0)
        while True:
            edges = [e for e in out_edges.get(cur, ()) if e.callee not in seen
                     and g.vertices[e.callee].kind != "alloc"]
            if not edges:
                break
            best = max(edges, key=lambda e: (repetition(e, by), e.callee))
            if repetition(best, by) < need or need <= 0:
                break
            cur, steps = best.callee, steps + 1
            seen.add(cur)
            if cur in ranked and cur not in visiting:
                # an equal: it carries (nearly) only these allocations, no more
                if FOCUS_SHARE * repetition(g.vertices[cur], by) <= repetition(g.vertices[key], by):
                    target, below = follow(cur, visiting)
                    result = (target, steps + below)
                break
        focus[key] = result
        return result

    for key in ranked:
        follow(key, set())
    return focus
