"""What the profiles recorded stacks for, and why a selection has no stack trace types.

The recorder stores stacks only for the sizes and regions given to `heapscope record
--sizes/--regions` (each profile's settings `stack_sizes`, `stack_regions`). When a
command finds no stack trace type of the sizes and region asked for, it says which of
these it is, in one line:

  not recorded   the recording did not cover them: what it covered, and the command
                 that records them ("all" covers whatever sizes were recorded: a note
                 says which, all_means_recorded)
  not allocated  it covered them, but the program made no such allocation (there)
  lost           allocations were counted, but the stack table was full

and, when some of a recorded size's allocations have a stack and others not, which
and why (without_stacks).
"""
import shlex
from typing import Callable, List, Optional, Sequence

from heapscope.analysis.selection import SizeSet, region_matches
from heapscope.errors import HeapscopeError
from heapscope.profile.model import Profile


def require_recorded(profiles: Sequence[Profile], has: Callable[[Profile], bool], what: str,
                     option: str) -> List[Profile]:
    """The profiles for which has(p) holds; none -> one line saying they have no `what`
    and the `heapscope record` option that records it."""
    kept = [p for p in profiles if has(p)]
    if not kept:
        cmd = " ".join(profiles[0].cmdline) if profiles and profiles[0].cmdline else "PROGRAM ARGS..."
        which = (f"{profiles[0].path} has no" if len(profiles) == 1
                 else f"none of the {len(profiles)} profiles has")
        raise HeapscopeError(f"{which} {what}: record with `heapscope record {option} -- {cmd}`")
    return kept


def requested(sizes: SizeSet) -> List[str]:
    """The parts of a size spec: exact sizes and ranges, as the user wrote them."""
    if sizes.everything:
        return ["all"]
    return [str(s) for s in sorted(sizes.exact)] + [f"{lo}-{hi}" for lo, hi in sizes.ranges]


def covers(p: Profile, part: str, region: Optional[str]) -> bool:
    """Whether `p` recorded the stacks of size part `part` (in `region`)."""
    recorded = (p.settings.get("stack_sizes") or "").strip()
    if p.settings.get("sample_bytes"):
        recorded = "all"   # sampled stacks: every size (analysis/sampling.py)
    if not recorded:
        return False
    regions = [r.strip() for r in (p.settings.get("stack_regions") or "").split(",") if r.strip()]
    if region and regions and not any(region_matches(region, r) or region_matches(r, region)
                                      for r in regions):
        return False
    have = SizeSet(recorded)
    if have.everything or part == "all":    # "all": every size it recorded stacks for
        return True
    if "-" in part:
        lo, hi = (int(x) for x in part.split("-"))
        return any(lo <= s <= hi for s in have.exact) or any(
            a <= hi and lo <= b for a, b in have.ranges)
    return int(part) in have


def all_means_recorded(profiles: Sequence[Profile], sizes: SizeSet) -> Optional[str]:
    """A note when --size all meets a recording of some sizes only: "all" then stands for
    every size whose stacks were recorded (None when the selection is not "all" or every
    profile recorded every size)."""
    if not sizes.everything:
        return None
    specs = {(p.settings.get("stack_sizes") or "").strip() for p in profiles} - {""}
    if not specs or specs == {"all"}:
        return None
    return f"--size all: every size whose stacks were recorded ({recorded_text(profiles)})"


def recorded_text(profiles: Sequence[Profile]) -> str:
    """"stacks were recorded for every size", "... for sizes 24 in regions local",
    "the profile recorded no stacks"."""
    specs = sorted({(p.settings.get("stack_sizes") or "").strip() for p in profiles} - {""})
    means = sorted({p.settings.get("sample_bytes") for p in profiles} - {0, None})
    if means:
        return (f"stacks were sampled in every size, one a mean "
                f"{' / '.join(f'{m:,}' for m in means)} bytes apart")
    if not specs:
        return "the profile recorded no stacks" if len(profiles) == 1 else \
            "the profiles recorded no stacks"
    regions = sorted({(p.settings.get("stack_regions") or "").strip() for p in profiles} - {""})
    what = " / ".join("every size" if s == "all" else f"sizes {s}" for s in specs)
    return f"stacks were recorded for {what}" + (f" in regions {', '.join(regions)}" if regions else "")


def not_recorded(profiles: Sequence[Profile], sizes: SizeSet, region: Optional[str]) -> List[dict]:
    """The requested size parts no profile recorded stacks for, each with the command
    that would record them."""
    out = []
    for part in requested(sizes):
        if any(covers(p, part, region) for p in profiles):
            continue
        recorded = sorted({(p.settings.get("stack_sizes") or "") for p in profiles} - {""})
        cmd = profiles[0].cmdline if profiles and profiles[0].cmdline else ["PROGRAM", "ARGS..."]
        record = (f"heapscope record --sizes {part}" + (f" --regions {region}" if region else "")
                  + f" -- {shlex.join(cmd)}")
        where = f" in region {region}" if region else ""
        out.append(dict(size=part, region=region, recorded_sizes=recorded, command=record,
                        message=f"no stacks recorded for size {part}{where} "
                                f"({recorded_text(profiles)}); record them with: {record}"))
    return out


def allocated(profiles: Sequence[Profile], sizes: SizeSet, region: Optional[str]) -> int:
    """Allocations of the selected sizes and region the profiles counted."""
    return sum(count for p in profiles for (r, size), count in p.size_counts.items()
               if size in sizes and region_matches(r, region))


def no_stacks_reason(profiles: Sequence[Profile], sizes: SizeSet, region: Optional[str]) -> str:
    """One line saying why the profiles hold no stack trace type of the selection."""
    missing = not_recorded(profiles, sizes, region)
    if missing:   # a part the recording did not cover: what would record it
        return missing[0]["message"]
    where = f" in region {region}" if region else ""
    what = "any size" if sizes.everything else f"size {sizes.spec}"
    count = allocated(profiles, sizes, region)
    if count == 0:
        return (f"no allocation of {what}{where} in the profiles: the program made none "
                f"({recorded_text(profiles)}; `heapscope report` lists the sizes it allocated)")
    lost = sum(p.lost_stacks for p in profiles)
    why = (f"{lost:,} allocations lost their stack: the stack table was full" if lost
           else recorded_text(profiles))
    return (f"no stack trace types of {what}{where}: {count:,} allocation"
            f"{'s were' if count != 1 else ' was'} counted, none with a stored stack ({why})")


def without_stacks(profiles: Sequence[Profile], sizes: SizeSet, region: Optional[str]) -> List[dict]:
    """Allocations counted in a size and region whose stacks were recorded (exactly: not
    sampled) but that hold no stack: per (size, region), how many and why. The recorder
    takes stacks from the first allocation of the process on; what is left are blocks
    allocated while it could not (before the C library had set the environment up, or
    a stack table full: lost_stacks)."""
    missing = {}
    lost = 0
    for p in profiles:
        if p.settings.get("sample_bytes"):
            continue
        typed = {}
        for t in p.stack_types:
            typed[(t.region, t.size)] = typed.get((t.region, t.size), 0) + t.count
        for (reg, size), n in p.size_counts.items():
            if size in sizes and region_matches(reg, region) and covers(p, str(size), reg) \
                    and n > typed.get((reg, size), 0):
                missing[(size, reg)] = missing.get((size, reg), 0) + n - typed.get((reg, size), 0)
        lost += p.lost_stacks
    why = ("allocated before the recorder could take stacks (at the process's start, before "
           "the C library was ready)" + (", or the stack table was full" if lost else ""))
    return [dict(size=size, region=reg, count=n, reason=why)
            for (size, reg), n in sorted(missing.items())]
