"""Which vertices of a call graph are the fix targets, in which order (docs/ranking.md).

A fix at a vertex removes the allocations that pass through it, so the ranking is by
allocations through the vertex (bytes with `by="bytes"`); the number of paths (stack
trace types) through it is its support, shown beside it and a tie-break. Only user code
is ranked (analysis.classify), and never the trunk.

The trunk: walk the calling-context tree from its root, following the callee that
carries at least TRUNK_SHARE of all allocations; the functions passed are trunk, up to
the first real branch (no callee carries that share). A stray path (one input-reading
call that bypasses the driver) leaves the walk on its way: it cannot turn a driver on
99% of the allocations into a fix target. The walk is made per thread root (the main
thread's from the program's start, each worker's from its start routine, against its own
root's total: thread_roots), so worker threads do not end the main thread's trunk.

The last user function of the trunk (where the paths branch) is ranked only when the
paths below it share nothing in user code deeper than the functions it calls directly:
then it is the one place a fix reaches them all (assembleLocal calling the element
matrix and load vector helpers). When two paths meet again deeper, the branches are
subsystems with targets of their own and the trunk's end is a driver (GenerateMesh of
gmsh, LAMMPS' constructor).

Among equals, the vertex nearest the allocation first: a caller whose allocations pass
(through a chain of dominant calls) for at least FOCUS_SHARE into one ranked callee that
carries no more than they do (within the same share) ranks right after that callee (a
fix in `timestep()` is the fix in the `mesh_refine()` it calls for 99% of its
allocations; the callee is where the code allocates).
"""
from typing import Dict, List, Sequence, Set, Tuple

from heapscope.analysis import classify as kinds

TRUNK_SHARE = 0.95
FOCUS_SHARE = 0.95
MEASURES = ("allocations", "bytes")


def measure(item, by: str) -> int:
    return item.bytes if by == "bytes" else item.count


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


MAIN_ROOT = ("main",)


def thread_roots(g, root_paths: Sequence[Sequence[tuple]],
                 root_functions: Sequence[Sequence[tuple]]) -> List[Tuple[tuple, int]]:
    """Each stack's root and the depth its trunk walk starts at. A stack whose outermost
    frames (before any user code) pass a thread start (classify.THREAD_START_FUNCTIONS:
    clone, start_thread) and no entry point is a worker thread's: its root is its first
    user function (the thread's start routine, past the C library's trampoline and a
    runtime's own start such as libgomp's), and its walk starts there. Every other
    stack (the main thread's, a truncated one) is the main root's, walked from its
    outermost frame: without worker threads, one root, as before."""
    out: List[Tuple[tuple, int]] = []
    for path, functions in zip(root_paths, root_functions):
        root, start, worker = MAIN_ROOT, 0, False
        for depth, (key, fkey) in enumerate(zip(path, functions)):
            if kinds.is_entry(fkey[1]):
                break
            if g.vertices[key].kind == kinds.USER:
                if worker:
                    root, start = ("thread", fkey), depth
                break
            worker = worker or fkey[1] in kinds.THREAD_START_FUNCTIONS
        else:
            if worker:
                root, start = ("thread", None), len(path)
        out.append((root, start))
    return out


def rank(g, root_paths: Sequence[Sequence[tuple]], root_functions: Sequence[Sequence[tuple]],
         weights: Sequence[int], by: str = "allocations") -> None:
    """Mark g's trunk vertices and number its fix targets (Vertex.trunk, Vertex.rank).
    root_paths: each stack's vertex keys, outermost first; root_functions: the same frames
    as function keys (equal to root_paths unless g.lines); weights: each stack's measure.

    The trunk is walked per root (thread_roots): the main thread's stacks from the
    program's start, each worker thread's from its start routine, each against its own
    root's total, so that a worker allocating 6% does not end the main thread's trunk at
    its first frame. A function is trunk when at least TRUNK_SHARE of the allocations
    through it pass it where it is on its root's trunk: a worker's driver that the main
    thread also calls below its branch (a mesher's face loop run by both) stays ranked."""
    function_of = _function_keys(g, root_paths, root_functions)
    kind_of = {fkey: g.vertices[key].kind for key, fkey in function_of.items()}
    members: Dict[tuple, List[int]] = {}
    starts = thread_roots(g, root_paths, root_functions)
    for i, (root, _) in enumerate(starts):
        members.setdefault(root, []).append(i)
    walks = []            # (paths, functions, walk, user depths) of each root with a user trunk
    on_trunk: Dict[tuple, int] = {}
    for root, indices in members.items():
        paths = [root_paths[i][starts[i][1]:] for i in indices]
        functions = [root_functions[i][starts[i][1]:] for i in indices]
        walk = trunk_walk(functions, [weights[i] for i in indices])
        user_depths = [d for d, key in enumerate(walk) if kind_of[key] == kinds.USER]
        if not user_depths:
            continue
        walks.append((paths, functions, walk, user_depths))
        trunk_here = {walk[d] for d in user_depths}
        for i, fs in zip(indices, functions):
            for fkey in trunk_here.intersection(fs):
                on_trunk[fkey] = on_trunk.get(fkey, 0) + weights[i]
    through: Dict[tuple, int] = {}
    for fs, w in zip(root_functions, weights):
        for fkey in on_trunk.keys() & set(fs):
            through[fkey] = through.get(fkey, 0) + w
    trunk_functions = {f for f, w in on_trunk.items() if w >= TRUNK_SHARE * through[f]}
    for key, v in g.vertices.items():
        if v.kind == kinds.USER and function_of.get(key) in trunk_functions:
            v.trunk = True
    candidates = [v for v in g.vertices.values() if v.kind == kinds.USER and not v.trunk]
    ends: List[tuple] = []
    for paths, functions, walk, user_depths in walks:
        last = user_depths[-1]
        if walk[last] in trunk_functions and not _branches_meet_again(g, paths, functions, walk):
            # The branches never meet again in user code: where they last met is the target.
            followers = [i for i, path in enumerate(functions) if path[:last + 1] == walk[:last + 1]]
            ends.extend(key for key in sorted({paths[i][last] for i in followers})
                        if key not in ends)
    for key in ends:
        g.vertices[key].trunk = False
        candidates.append(g.vertices[key])
    ranked = {v.key for v in candidates}
    focus = _focus(g, ranked, by)

    def own(v):
        return (-measure(v, by), -v.types, v.distance, v.function, v.file, v.line)

    candidates.sort(key=lambda v: (own(g.vertices[focus[v.key]]), v.distance, own(v)))
    for i, v in enumerate(candidates, 1):
        v.rank = i


def _function_keys(g, root_paths, root_functions) -> Dict[tuple, tuple]:
    out: Dict[tuple, tuple] = {}
    for path, functions in zip(root_paths, root_functions):
        for key, fkey in zip(path, functions):
            out[key] = fkey
    return out


def _branches_meet_again(g, root_paths, root_functions, walk) -> bool:
    """Whether two paths (stacks) that follow the whole trunk share a user vertex below
    the first user function each reaches after it: then the branches are subsystems
    with fix targets of their own (a driver's kernels meeting in a shared helper; a mesh
    generator's Delaunay step with its 25 paths under GenerateMesh) and the trunk's end
    is a driver. When they share at most those first functions (helpers called directly:
    the element matrix and load vector under assembleLocal), the trunk's end is the one
    place a fix reaches them all."""
    depth = len(walk)
    paths_through: Dict[tuple, int] = {}
    for path, functions in zip(root_paths, root_functions):
        if list(functions[:depth]) != walk or len(functions) <= depth:
            continue
        user = [key for key in dict.fromkeys(path[depth:])
                if g.vertices[key].kind == kinds.USER and not g.vertices[key].trunk]
        for key in user[1:]:
            paths_through[key] = paths_through.get(key, 0) + 1
            if paths_through[key] > 1:
                return True
    return False


def _focus(g, ranked: Set[tuple], by: str) -> Dict[tuple, tuple]:
    """For each ranked vertex, its equal nearest the allocation: the ranked vertex reached
    through a chain of calls carrying at least FOCUS_SHARE of its allocations, and
    carrying itself no more than those (itself when there is none)."""
    out_edges: Dict[tuple, list] = {}
    for e in g.edges.values():
        out_edges.setdefault(e.caller, []).append(e)
    focus: Dict[tuple, tuple] = {}

    def follow(key: tuple, visiting: Set[tuple]) -> tuple:
        if key in focus:
            return focus[key]
        visiting.add(key)
        need = FOCUS_SHARE * measure(g.vertices[key], by)
        cur, seen = key, {key}
        result = key
        while True:
            edges = [e for e in out_edges.get(cur, ()) if e.callee not in seen
                     and g.vertices[e.callee].kind != "alloc"]
            if not edges:
                break
            best = max(edges, key=lambda e: (measure(e, by), e.callee))
            if measure(best, by) < need or need <= 0:
                break
            cur = best.callee
            seen.add(cur)
            if cur in ranked and cur not in visiting:
                # an equal: it carries (nearly) only these allocations, no more
                if FOCUS_SHARE * measure(g.vertices[cur], by) <= measure(g.vertices[key], by):
                    result = follow(cur, visiting)
                break
        focus[key] = result
        return result

    for key in ranked:
        follow(key, set())
    return focus
