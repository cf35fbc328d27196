"""Drivers below the trunk: functions whose paths branch and meet again in user code
(docs/ranking.md, rule 5).

A function whose allocations go down several of its callees (none carries FOCUS_SHARE
of them: else it is that callee's equal) and meet again below, in a function that two of
those callees reach, calls subsystems that share code: a fix in it is only ever a fix in
what it calls, like the trunk's. Octave's statement loop (`visit_statement` calling
assignments and for loops, which evaluate expressions through the same functions), QE's
XML writer (the `qes_write_*` routines meeting in FoX's `xml_AddAttribute_Ch`), gmsh's
face mesher (its algorithms meeting in `MFace::MFace`). The trunk (the drivers on every
path) is found first by fix_targets; these are the drivers of one phase or branch.
Meeting in a wrapper does not count: that is meeting in the allocator.
"""
from typing import Dict, List, Sequence, Set

FOCUS_SHARE = 0.95


def find(root_functions: Sequence[Sequence[tuple]], weights: Sequence[int],
         rankable: Set[tuple]) -> Set[tuple]:
    """The function keys of the drivers among `rankable` (user code, not a wrapper, not
    trunk). root_functions: each stack's frames as function keys, outermost first."""
    below: Dict[tuple, Dict[tuple, Set[tuple]]] = {}   # caller -> callee -> user functions below
    callees: Dict[tuple, Dict[tuple, int]] = {}
    for functions, w in zip(root_functions, weights):
        inner = list(dict.fromkeys(reversed(functions)))   # innermost first, once each
        for j in range(1, len(inner)):
            share = callees.setdefault(inner[j], {})
            share[inner[j - 1]] = share.get(inner[j - 1], 0) + w
        passed: List[tuple] = []        # the user functions below, innermost first
        for j, key in enumerate(inner):
            if key not in rankable:
                continue
            if j and passed:
                below.setdefault(key, {}).setdefault(inner[j - 1], set()).update(passed)
            passed.append(key)
    found = {key for key, by_callee in below.items() if _meet(by_callee.values())}
    while True:   # a caller passing everything into one that does is one too
        more = _passing_into(found, callees, rankable)
        if not more:
            return found
        found |= more


def _meet(sets) -> bool:
    """Whether two of the sets share a member."""
    seen: Set[tuple] = set()
    for members in sets:
        if not seen.isdisjoint(members):
            return True
        seen |= members
    return False


def _passing_into(found: Set[tuple], callees: Dict[tuple, Dict[tuple, int]],
                  rankable: Set[tuple]) -> Set[tuple]:
    """The functions that pass FOCUS_SHARE of their allocations, through a chain of such
    calls, into a driver (Octave's statement-list loop into the statement dispatcher):
    drivers too, as a caller passing everything to a target is that target's equal."""
    out: Set[tuple] = set()
    for key in rankable - found:   # new ones only
        cur, seen = key, {key}
        while True:
            share = callees.get(cur)
            if not share:
                break
            best = max(share, key=lambda k: (share[k], k))
            if share[best] < FOCUS_SHARE * sum(share.values()) or best in seen:
                break
            if best in found:
                out.add(key)
                break
            if best in rankable:   # a target of its own before any driver
                break
            cur = best
            seen.add(cur)
    return out
