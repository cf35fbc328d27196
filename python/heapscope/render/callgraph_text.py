"""Text of `heapscope callgraph`: the graph's size, the ranked fix targets with who calls
them, what was drawn but not ranked, the files drawn and the notes.

Takes the CallGraph (analysis.callgraph) for the callers of each vertex, and its
document (analysis.callgraph.document) for the selection, the drawn files and notes.
"""
import os
from typing import List

from heapscope.analysis import classify as kinds
from heapscope.analysis.callgraph import ALLOC, CallGraph, callers, shown, shown_kind
from heapscope.render.text import counted

CALLERS_SHOWN = 4   # "called from" entries per ranked vertex
SITES_SHOWN = 5     # user call sites per runtime pattern


def title(doc: dict) -> str:
    """"size 24 in region local: 3 stack trace types, 9,000 allocations, 216,000 bytes"."""
    where = f" in region {doc['region']}" if doc["region"] else ""
    return (f"size {doc['size']}{where}: {counted(doc['types'], 'stack trace type')}, "
            f"{counted(doc['count'], 'allocation')}, {counted(doc['bytes'], 'byte')}")


def render(g: CallGraph, doc: dict, top: int) -> str:
    out: List[str] = [f"Call graph of {title(doc)}"]
    drawn = len(g.vertices) - sum(v.kind == ALLOC for v in g.vertices.values())
    out.append(f"{counted(drawn, 'line' if g.lines else 'function')}, "
               f"{counted(len(g.edges), 'call edge')}.")
    ranked = shown(g, top)
    if not ranked:
        out += ["", "No user-code vertex to rank: every frame is an entry point or runtime code."]
    else:
        measure = "bytes" if g.by == "bytes" else "allocations"
        out += ["", f"Fix targets (user code, by the {measure} a fix there removes: those beyond "
                    f"the first of each call path, so one-off set-up weighs least; types = paths "
                    f"through it; nearest the allocation among equals):",
                f"{'rank':>4} {'types':>6} {'allocations':>12} {'repeats':>12} {'share':>6} "
                f"{'bytes':>12} {'dist':>4}  vertex"]
        for v in ranked:
            share = 100.0 * v.count / g.count if g.count else 0.0
            where = f" @ {v.file}:{v.line}" if g.lines and v.file else (f" @ {v.file}" if v.file else "")
            repeats = v.repeated_bytes if g.by == "bytes" else v.repeats
            out.append(f"{v.rank:>4} {v.types:>6} {v.count:>12,} {repeats:>12,} {share:>5.1f}% "
                       f"{v.bytes:>12,} {v.distance:>4}  {v.function}{where}")
            via = ", ".join(f"{g.vertices[e.caller].function} ({e.count:,})"
                            for e in callers(g, v.key)[:CALLERS_SHOWN])
            if via:
                out.append(f"{'':>60}called from: {via}")
    out += wrappers(doc.get("wrappers") or [])
    out += patterns(doc.get("runtime_patterns") or [])
    parts = _unranked(g)
    if parts:
        out += ["", f"Drawn, not ranked: {', '.join(parts)}."]
    out += [f"wrote {doc[kind]}" for kind in ("dot", "svg") if doc[kind]]
    out += [f"note: {n}" for n in doc["notes"]]
    return "\n".join(out) + "\n"


def patterns(found: List[dict]) -> List[str]:
    """"OpenMP runtime (libgomp.so.1) allocates per call of GOMP_task: 600 allocations
    (100.0%), from phase_a._omp_fn.0 @ rank.c:18 (400), ..."."""
    if not found:
        return []
    out = ["", "Runtime libraries allocating per call of user code (the cause is the call):"]
    for p in found:
        out.append(f"  {p['family']} ({p['library']}) allocates per call of {p['entry']}: "
                   f"{counted(p['count'], 'allocation')} ({100.0 * p['share']:.1f}%), "
                   f"{counted(p['types'], 'path')}")
        sites = []
        for s in p["call_sites"][:SITES_SHOWN]:
            where = f" @ {os.path.basename(s['file'])}:{s['line']}" if s["file"] else ""
            sites.append(f"{s['function']}{where} ({s['count']:,})")
        more = len(p["call_sites"]) - SITES_SHOWN
        tail = f", and {counted(more, 'more call site')}" if more > 0 else ""
        out.append(f"    called from: {', '.join(sites)}{tail}")
    return out


def wrappers(found: List[dict]) -> List[str]:
    """"Wrappers, seen through like the allocator: app_malloc (6,001 allocations from 4
    call sites)"."""
    if not found:
        return []
    listed = [f"{w['function']} ({counted(w['count'], 'allocation')} from "
              f"{counted(w['call_sites'], 'call site')})" for w in found[:SITES_SHOWN]]
    more = len(found) - SITES_SHOWN
    tail = f", and {counted(more, 'more wrapper')}" if more > 0 else ""
    return ["", "Wrappers (user code passing each call to one allocation), seen through like the "
                "allocator:", f"  {', '.join(listed)}{tail}"]


def _unranked(g: CallGraph) -> List[str]:
    """"2 entry points, 5 runtime frames, 1 trunk vertex (on every path ...)"."""
    unranked = {}
    for v in g.vertices.values():
        if not v.rank and v.kind != ALLOC:
            unranked.setdefault(shown_kind(v), []).append(v)
    labels = {kinds.ENTRY: ("entry point", ""), kinds.RUNTIME: ("runtime frame", ""),
              "trunk": ("trunk vertex", "trunk vertices"), kinds.USER: ("user vertex", "user vertices"),
              "wrapper": ("wrapper", ""), "driver": ("driver", "")}
    parts = [counted(len(vs), *labels.get(k, (k, ""))) for k, vs in sorted(unranked.items())]
    if "trunk" in unranked:
        parts[sorted(unranked).index("trunk")] += (" (on >= 95% of their thread's allocations, "
                                                   "before its first branch)")
    if "driver" in unranked:
        parts[sorted(unranked).index("driver")] += " (their paths branch and meet again below)"
    return parts
