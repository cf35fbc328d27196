"""Which vertices of a big call graph a drawing shows (the JSON keeps them all).

A Python run's 2,226 stack trace types merge into 663 functions: graphviz takes minutes
to lay that out and nobody can read it. The drawing keeps what the ranking is about:
the ranked vertices listed (the first `top`), the trunk, and for each ranked vertex its
heaviest path up to a root (the caller carrying most of its allocations, then that
caller's, ...) and down to the allocation sinks; ranked vertices are taken in rank
order until `limit` vertices are kept. What is left out is summed up in one line.
"""
from dataclasses import dataclass
from typing import Dict, List, Set

from heapscope.analysis.callgraph import ALLOC, CallGraph, shown

DRAWN_LIMIT = 60   # vertices drawn by default: a graph that fits a screen and lays out in seconds


@dataclass
class View:
    keep: Set[tuple]     # vertex keys drawn
    hidden: int          # vertices left out (sinks included)
    hidden_edges: int

    @property
    def complete(self) -> bool:
        return self.hidden == 0


def view(g: CallGraph, top: int, limit: int = DRAWN_LIMIT) -> View:
    """The vertices to draw: all when the graph has at most `limit` (0 = no limit)."""
    if limit <= 0 or len(g.vertices) <= limit:
        return View(set(g.vertices), 0, 0)
    callers: Dict[tuple, List] = {}
    callees: Dict[tuple, List] = {}
    for e in g.edges.values():
        callers.setdefault(e.callee, []).append(e)
        callees.setdefault(e.caller, []).append(e)
    keep: Set[tuple] = {v.key for v in g.vertices.values() if v.trunk}
    for v in shown(g, top) or g.ranking[:1]:
        path = {v.key} | _heaviest(v.key, callers, "caller") | _heaviest(v.key, callees, "callee")
        if len(keep | path) > limit and keep:
            break
        keep |= path
    if not keep:   # nothing ranked: the heaviest path of the heaviest sink
        sink = max((v for v in g.vertices.values() if v.kind == ALLOC), key=lambda v: v.count)
        keep = {sink.key} | _heaviest(sink.key, callers, "caller")
    edges = sum(1 for e in g.edges.values() if e.caller in keep and e.callee in keep)
    return View(keep, len(g.vertices) - len(keep), len(g.edges) - edges)


def _heaviest(start: tuple, adjacent: Dict[tuple, List], end: str) -> Set[tuple]:
    """Keys along the edge carrying most allocations, step after step from `start`."""
    out: Set[tuple] = set()
    cur = start
    while True:
        edges = [e for e in adjacent.get(cur, ()) if getattr(e, end) not in out
                 and getattr(e, end) != start]
        if not edges:
            return out
        best = max(edges, key=lambda e: (e.count, getattr(e, end)))
        cur = getattr(best, end)
        out.add(cur)
