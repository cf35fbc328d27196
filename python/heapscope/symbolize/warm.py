"""Symbolize a recording's stack frames into the symbol cache as `heapscope record` ends.

At that moment the binaries on disk are the ones that ran. A developer who fixes the
code and rebuilds in place before comparing (`heapscope diff --stacks before/ after/`)
would otherwise find the old build's frames unreadable: its build-id is no longer on
disk. The answers go to the per-build-id cache (symbolize.cache), which the
Symbolizer asks by build-id before it looks at the binary, so the old frames keep
their names. `heapscope record --no-symbolize` skips this (a large recording of many
stack types, or one recorder per rank of a big job, can take a while).

    result = warm(["prof/heapscope.vm.42.hsp"])
    result.addresses, result.problems
"""
from dataclasses import dataclass, field
from typing import Iterable, List, Optional, Set

from heapscope.errors import HeapscopeError
from heapscope.profile import read_profile
from heapscope.profile.model import Profile
from heapscope.symbolize.symbolizer import Symbolizer


@dataclass
class Warmed:
    profiles: int = 0                                   # profiles read
    addresses: int = 0                                  # distinct return addresses symbolized
    problems: List[str] = field(default_factory=list)   # one line each, for a warning


def stack_addresses(profile: Profile) -> Set[int]:
    """Every return address of the profile's stack trace types (counting and tracking):
    symbolizing stack types, never events."""
    found = {a for t in profile.stack_types for a in t.frames}
    # An event trace's stacks are the stack types above (one table of them): no replay,
    # which would cost seconds per million events.
    if not profile.tracking_deferred and profile.tracking is not None:
        found.update(a for s in profile.tracking.stacks for a in s.frames)
    return found


def warm(paths: Iterable, symbolizer: Optional[Symbolizer] = None) -> Warmed:
    """Symbolize the stack frames of the profiles at `paths` into the cache. A profile
    that cannot be read (a process killed before its first snapshot) is skipped: the
    reports will say what is wrong with it."""
    sym = symbolizer or Symbolizer()
    out = Warmed()
    for path in paths:
        try:
            profile = read_profile(path)
        except HeapscopeError:
            continue
        out.profiles += 1
        addresses = stack_addresses(profile)
        if not addresses:
            continue
        try:
            sym.resolve(profile, addresses)
        except HeapscopeError as exc:   # eu-addr2line failed or timed out on a module
            out.problems.append(str(exc))
            continue
        out.addresses += len(addresses)
    if sym.tool_missing:
        out.problems.append("eu-addr2line not found (install elfutils): frames not cached")
    if sym.unsaved:
        out.problems.append(f"the symbol cache {sym.cache.root} is not writable: "
                            f"{sym.unsaved:,} frames not cached")
    return out
