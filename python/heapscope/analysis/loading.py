"""The bridge from recorded profiles to analyses: read, select, symbolize.

    profiles = read(["run1/"])                       # heapscope.profile.load_profiles
    stacks = weighted_stacks(profiles, SizeSet("12"), "local", symbolizer=sym)

Every stack trace type of the chosen sizes and regions becomes a WeightedStack with
symbolized frames (heapscope.symbolize); identical symbolized paths from several
processes are merged unless asked not to (sampled stacks: their estimates taken over
the merge, analysis/sampling.py). Nothing here prints: the reader's warnings
(reader_warnings) and the symbolizer's notes (Symbolizer.notes) are handed back for
the command to show (commands/reading.py).
"""
from typing import List, Optional, Sequence

from heapscope.analysis import sampling
from heapscope.analysis.addresses import addresses_of, merged_stacks, weighted
from heapscope.analysis.recorded import no_stacks_reason
from heapscope.analysis.selection import SizeSet, check_region, region_matches
from heapscope.analysis.stacks import WeightedStack
from heapscope.errors import HeapscopeError
from heapscope.profile import load_profiles
from heapscope.profile.model import Profile
from heapscope.symbolize import Symbolizer


def read(paths: Sequence[str], left_out: Optional[list] = None) -> List[Profile]:
    """The profiles in `paths` (files, or directories of them); their warnings stay on
    Profile.warnings (reader_warnings). left_out: receives (path, why) of the files that
    cannot be read, then left out (profile.load_profiles)."""
    return load_profiles(paths, left_out)


def left_out_lines(left_out: Sequence[tuple]) -> List[str]:
    """One line per file left out, naming it and why."""
    return [f"{path}: left out: {why}" for path, why in left_out]


def reader_warnings(profiles: Sequence[Profile]) -> List[str]:
    """One line per warning the reader left on the profiles, naming the file."""
    return [f"{p.path}: {w}" for p in profiles for w in p.warnings]


def region_paths(profiles: Sequence[Profile]) -> List[str]:
    return sorted({r.path for p in profiles for r in p.regions.values()})


def selected_types(profile: Profile, sizes: SizeSet, region: Optional[str]):
    if sizes.everything and region is None:
        return list(profile.stack_types)
    return [t for t in profile.stack_types if t.size in sizes and region_matches(t.region, region)]


def weighted_stacks(profiles: Sequence[Profile], sizes: SizeSet, region: Optional[str],
                    merge: bool = True, symbolizer: Optional[Symbolizer] = None,
                    check: bool = True) -> List[WeightedStack]:
    """Symbolized stack trace types of the selected sizes and regions, of all profiles.
    With `check`, a region that none of the profiles has is an error. The symbolizer's
    notes (missing debug information) are left on `symbolizer.notes`."""
    if check:
        check_region(region_paths(profiles), region)
    sym = symbolizer or Symbolizer()
    chosen = []
    for p in profiles:
        types = selected_types(p, sizes, region)
        if types:
            chosen.append((types, addresses_of(sym, p, types)))
    if not merge:
        return [weighted(a.frames_of(t.frames), t.count, t.bytes, t.region, t.size, t.samples, 1)
                for types, a in chosen for t in types]
    return sampling.pooled(merged_stacks(chosen), profiles)


def require_stacks(stacks: List[WeightedStack], profiles: Sequence[Profile], sizes: SizeSet,
                   region: Optional[str]) -> None:
    """No stack types for the selection: say why in one line (analysis.recorded): not
    recorded (and how to), not allocated, or lost."""
    if stacks:
        return
    raise HeapscopeError(no_stacks_reason(profiles, sizes, region))


def lost_stack_warning(profiles: Sequence[Profile]) -> Optional[str]:
    lost = sum(p.lost_stacks for p in profiles)
    if lost:
        return (f"{lost:,} allocation{'s' if lost != 1 else ''} of the recorded sizes lost "
                f"{'their stacks' if lost != 1 else 'its stack'} (stack table full) and "
                f"{'are' if lost != 1 else 'is'} missing from the stack types")
    return None
