"""The `heapscope stacks` document (step two of the method, locate), as plain data.

Stack trace types of the chosen sizes and regions, symbolized and merged across
processes by their symbolized frames (analysis.loading, the same merge the call
graph and the diff use), grouped per (size, region), most frequent first. Sizes the
profiles recorded no stacks for are listed in `not_recorded` with the command that
records them; allocations of recorded sizes that hold no stack, in `without_stack`. Rendered by render.stacks_text and render.csv_tables.
"""
from typing import Dict, List, Optional, Sequence, Tuple

from heapscope.analysis import recorded, sampling
from heapscope.analysis.loading import region_paths, weighted_stacks
from heapscope.analysis.processes import describe
from heapscope.analysis.selection import SizeSet, check_region
from heapscope.errors import HeapscopeError
from heapscope.profile.model import Profile
from heapscope.symbolize import Symbolizer

STACKS_FORMAT = "heapscope-stacks"
STACKS_VERSION = 1


def build(profiles: Sequence[Profile], sizes: SizeSet, region: Optional[str] = None,
          top: int = 10, depth: int = 0, symbolizer: Optional[Symbolizer] = None,
          per_process: bool = False, stacks: Optional[List] = None) -> dict:
    """stacks: the merged weighted_stacks of this selection when the caller has them
    already (the HTML page draws its call graphs from the same ones)."""
    sym = symbolizer or Symbolizer()
    check_region(region_paths(profiles), region)   # before saying what was not recorded there
    not_recorded = recorded.not_recorded(profiles, sizes, region)
    if len(not_recorded) == len(recorded.requested(sizes)):   # none of them: nothing to show
        raise HeapscopeError(not_recorded[0]["message"])
    order = _region_order(profiles)

    def groups_of(selected, given=None):
        found = given if given is not None else weighted_stacks(selected, sizes, region,
                                                                merge=True, symbolizer=sym)
        return _groups(found, order, top, depth, sampling.one_mean(selected),
                       _exact_counts(selected))

    doc = dict(format=STACKS_FORMAT, version=STACKS_VERSION,
               processes=[describe(p) for p in profiles],
               merged=len(profiles) > 1 and not per_process,
               filters=dict(size=sizes.spec, region=region, top=top, depth=depth),
               notes=[], groups=groups_of(profiles, stacks), not_recorded=not_recorded,
               without_stack=recorded.without_stacks(profiles, sizes, region),
               sampling=sampling.describe(profiles))
    if per_process:
        doc["per_process"] = [dict(process=i, groups=groups_of([p])) for i, p in enumerate(profiles)]
    partial = recorded.all_means_recorded(profiles, sizes)
    doc["notes"] = ([partial] if partial else []) + list(sym.notes)
    return doc


def _exact_counts(profiles: Sequence[Profile]) -> Dict[Tuple[int, str], int]:
    """(size, region) -> allocations counted (exact, whatever the stacks' mode)."""
    out: Dict[Tuple[int, str], int] = {}
    for p in profiles:
        for (reg, size), n in p.size_counts.items():
            out[(size, reg)] = out.get((size, reg), 0) + n
    return out


def _type_figures(s, mean: int, cell_samples: int, exact: Optional[int]) -> dict:
    """A type's count and bytes; for sampled stacks also its samples and 95% interval
    (analysis/sampling.py: the type's samples among its size's, of its size's count)."""
    out = dict(count=s.count, bytes=s.bytes)
    if mean:
        low, high = sampling.count_interval(s.samples, cell_samples, exact)
        out.update(estimated=True, samples=s.samples, count_low=low, count_high=high)
    return out


def _groups(stacks, order: Dict[str, int], top: int, depth: int, mean: int = 0,
            exact: Optional[Dict[Tuple[int, str], int]] = None) -> List[dict]:
    """Stacks (most frequent first) -> one group per (size, region), by size then region
    order. Sampled stacks (mean > 0): the group's count is the exact one, each type's an
    estimate with its interval, and `unseen` bounds the allocations of the types no
    sample saw."""
    groups: Dict[Tuple[int, str], list] = {}
    # a frame's JSON made once (stacks share their Frame objects; a deep program's
    # groups list 760,000 frames), one dict shared by the types that show it
    made: Dict[int, tuple] = {}

    def frame_json(f) -> dict:
        known = made.get(id(f))
        if known is None:    # (the frame kept: its id stays its own)
            known = made[id(f)] = (f.to_json(), f)
        return known[0]

    for s in stacks:
        groups.setdefault((s.size, s.region), []).append(s)
    out = []
    for (size, reg) in sorted(groups, key=lambda k: (k[0], order.get(k[1], len(order)), k[1])):
        members = groups[(size, reg)]
        count = sum(s.count for s in members)
        counted = (exact or {}).get((size, reg)) if mean else None
        if counted is not None:
            count = counted
        nbytes = count * size if counted is not None else sum(s.bytes for s in members)
        shown = members[:top] if top else members
        samples = sum(s.samples for s in members) if mean else None
        group = dict(
            size=size, region=reg, types=len(members), count=count, bytes=nbytes,
            samples=samples,
            stack_types=[dict(rank=i, **_type_figures(s, mean, samples, count),
                              share=s.count / count if count else 0.0,
                              frames_total=len(s.frames),
                              frames=list(map(frame_json, s.frames[:depth] if depth else s.frames)))
                         for i, s in enumerate(shown, 1)])
        if mean:
            estimate, high = sampling.unseen_bound((s.samples for s in members), count, size, mean)
            group["unseen"] = dict(count=estimate, count_high=high)
        out.append(group)
    return out


def _region_order(profiles: Sequence[Profile]) -> Dict[str, int]:
    order: Dict[str, int] = {}
    for p in profiles:
        for rid in sorted(p.regions):
            order.setdefault(p.regions[rid].path, len(order))
    return order
