"""A runtime library that allocates per call of user code (docs/ranking.md).

When the allocation happens inside a runtime library (the OpenMP runtime starting a
parallel region, MPI setting up a request, libstdc++ building a string), the ranking
names the user function that called it, but the cause is the call itself: one
allocation (or more) per call of `GOMP_parallel`. Each stack is walked from the
allocation outwards: past the allocation functions themselves (malloc, operator new),
through runtime frames, to the first user frame. The outermost frame of a known runtime
library on that stretch is where user code entered the runtime; stacks are grouped by
(library family, library, entry function), with the user call sites (function,
file:line) and their allocations. A group is reported when it carries at least
MIN_SHARE of the allocations.
"""
import os
from typing import Dict, List, Sequence

from heapscope.analysis import classify as kinds
from heapscope.analysis.stacks import WeightedStack, frame_name

MIN_SHARE = 0.05
SITES_SHOWN = 5
ALLOCATION_FUNCTIONS = frozenset({
    "malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign",
    "valloc", "pvalloc", "reallocarray", "strdup", "strndup", "__libc_malloc", "__libc_calloc",
    "__libc_realloc", "__libc_memalign",
})


def is_allocation_function(name: str) -> bool:
    return (name in ALLOCATION_FUNCTIONS or name.startswith(("operator new", "hs_", "hsm_"))
            or name.startswith("__gnu_cxx::new_allocator") or "::allocate(" in name)


def _unnamed_application_frame(frame, main_executable: str, app_modules) -> bool:
    """An unresolved frame of the program itself (a stripped main calling MPI_Init): never
    a fix target, but the call site of a runtime all the same."""
    return (frame.function in ("", kinds.UNRESOLVED) and bool(frame.module)
            and (frame.module == main_executable or frame.module in app_modules))


def find(stacks: Sequence[WeightedStack], main_executable: str = "", app_modules=(),
         min_share: float = MIN_SHARE) -> List[dict]:
    """The runtime-per-call patterns of `stacks`, most allocations first (plain data)."""
    total = sum(s.count for s in stacks) or 1
    groups: Dict[tuple, dict] = {}
    for s in stacks:
        entry = None
        site = None
        for frame in s.frames:                         # innermost first
            kind = kinds.classify_frame(frame, main_executable, app_modules)
            if kind == kinds.USER or _unnamed_application_frame(frame, main_executable, app_modules):
                site = frame
                break
            family = kinds.runtime_family(frame.module)
            outer_libc = family == "C library" and entry is not None and entry[0] != family
            if family and not outer_libc and not is_allocation_function(frame.function):
                entry = (family, os.path.basename(frame.module), frame_name(frame))
            if kind == kinds.ENTRY:
                break
        if entry is None or site is None:   # no user code called it: not a per-call pattern
            continue
        gr = groups.setdefault(entry, dict(family=entry[0], library=entry[1], entry=entry[2],
                                           count=0, bytes=0, types=0, sites={}))
        gr["count"] += s.count
        gr["bytes"] += s.bytes
        gr["types"] += 1
        where = (frame_name(site), site.file, site.line)
        gr["sites"][where] = gr["sites"].get(where, 0) + s.count
    out = []
    for gr in sorted(groups.values(), key=lambda g: (-g["count"], g["library"], g["entry"])):
        if gr["count"] < min_share * total:
            continue
        sites = sorted(gr["sites"].items(), key=lambda kv: (-kv[1], kv[0]))
        gr["share"] = gr["count"] / total
        gr["call_sites"] = [dict(function=f, file=file, line=line, count=n)
                            for (f, file, line), n in sites]
        del gr["sites"]
        out.append(gr)
    return out
