"""Tracked stack types (record --track / --trace) of chosen sizes and regions, symbolized,
and the header every tracking document (lifetimes, temporaries, peak, leaks) carries.

    profiles, entries, sym = load_tracked(paths, "40", "local")
    for e in entries: e.region, e.size, e.frames, e.life   # life: merged Lifetimes
    doc.update(document_header(profiles, sym, size="40", region="local", top=20, depth=0))

What the lifetimes, temporaries, peak and leaks reports consume. A stack trace type is
identified as in the other reports (analysis.stacks.identity: function, file and line
of every frame), so the same path in several processes is one entry whose figures
are added up. Sizes tracked without stacks have frames () and stand for the whole
size in their region, with the reason they have no stack (NO_STACK).
"""
import shlex
from dataclasses import dataclass
from functools import cached_property
from itertools import zip_longest
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from heapscope.analysis import recorded, sampling
from heapscope.analysis.processes import describe
from heapscope.analysis.selection import SizeSet, check_region, region_matches
from heapscope.analysis.stacks import identity
from heapscope.errors import HeapscopeError
from heapscope.profile.model import LIFETIME_BINS, Lifetimes, Profile
from heapscope.symbolize import Frame, Symbolizer

NO_HIST = (0,) * LIFETIME_BINS


@dataclass(frozen=True)
class TrackedEntry:
    region: str
    size: int
    frames: Tuple[Frame, ...]   # innermost first; () when the stack was not recorded
    life: Lifetimes
    no_stack: Optional[str] = None   # why frames is (): a NO_STACK key; None with frames
    sampled: Optional[Lifetimes] = None   # sampled stacks: life is estimated from these

    @property
    def estimated(self) -> bool:
        return self.sampled is not None

    @cached_property
    def key(self) -> tuple:
        """(region, size, frame identities): worked out once, reports sort by it."""
        return (self.region, self.size, tuple(identity(f) for f in self.frames))


# Why a tracked row has no stack (its blocks are counted per size, without frames).
NO_STACK = {
    "not-selected": "this size was tracked without its stacks",
    "start-up": "allocated before the recorder captured stacks, during program start-up",
    "start-up-or-lost": "allocated during program start-up, before the recorder captured "
                        "stacks, or its stack was not stored (the stack table was full)",
    "not-sampled": "no sampled block of this size had this figure (or it is what rounding "
                   "its paths' shares down left)",
}


def no_stack_reason(p: Profile, size: int, region: str) -> str:
    """The NO_STACK key of a row of `p` without frames: the recording did not ask for
    the stacks of this size (and region), or it did and the row holds blocks allocated
    before stack capture started (a C++ runtime's emergency pool, other libraries'
    constructors) or whose stack found the table full."""
    if p.settings.get("sample_bytes"):
        return "not-sampled"
    if not recorded.covers(p, str(size), region):
        return "not-selected"
    return "start-up-or-lost" if p.lost_stacks else "start-up"


def add_lifetimes(a: Lifetimes, b: Lifetimes) -> Lifetimes:
    """Two Lifetimes of the same path (several processes), added field by field."""
    return Lifetimes(
        allocs=a.allocs + b.allocs, frees=a.frees + b.frees, temporaries=a.temporaries + b.temporaries,
        time_hist=tuple(x + y for x, y in zip(_hist(a.time_hist), _hist(b.time_hist))),
        between_hist=tuple(x + y for x, y in zip(_hist(a.between_hist), _hist(b.between_hist))),
        live_at_peak=a.live_at_peak + b.live_at_peak,
        live_at_peak_bytes=a.live_at_peak_bytes + b.live_at_peak_bytes,
        live_at_end=a.live_at_end + b.live_at_end, live_at_end_bytes=a.live_at_end_bytes + b.live_at_end_bytes)


def sum_lifetimes(lives: Sequence[Lifetimes]) -> Lifetimes:
    """Lifetimes added field by field, in one pass (a size's many stack types)."""
    if len(lives) == 1:
        return lives[0]
    return Lifetimes(
        allocs=sum(x.allocs for x in lives), frees=sum(x.frees for x in lives),
        temporaries=sum(x.temporaries for x in lives),
        time_hist=_hist(map(sum, zip_longest(*(x.time_hist for x in lives), fillvalue=0))),
        between_hist=_hist(map(sum, zip_longest(*(x.between_hist for x in lives), fillvalue=0))),
        live_at_peak=sum(x.live_at_peak for x in lives),
        live_at_peak_bytes=sum(x.live_at_peak_bytes for x in lives),
        live_at_end=sum(x.live_at_end for x in lives),
        live_at_end_bytes=sum(x.live_at_end_bytes for x in lives))


def _hist(h) -> tuple:
    h = tuple(h)
    return h + (0,) * (LIFETIME_BINS - len(h)) if len(h) < LIFETIME_BINS else h


def require_tracking(profiles: Sequence[Profile]) -> List[Profile]:
    """The profiles that hold tracking data; none -> one line saying how to record it."""
    return recorded.require_recorded(profiles, lambda p: p.tracking is not None,
                                     "tracking data (lifetimes, peak, leaks)", "--track")


def tracked_entries(profiles: Sequence[Profile], sizes: SizeSet, region: Optional[str],
                    symbolizer: Optional[Symbolizer] = None, required: bool = True) -> List[TrackedEntry]:
    """Symbolized, merged entries of the selected sizes and regions of tracked profiles.
    An unknown region is an error; so is a selection with no tracked allocation, when
    `required`."""
    if required:
        check_region({r.path for p in profiles for r in p.regions.values()}
                     | {s.region for p in profiles for s in p.tracking.stacks}, region)
    sym = symbolizer or Symbolizer()
    merged = merge_entries(profile_entries(p, sizes, region, sym) for p in profiles)
    if not merged and required:
        have = sorted({s.size for p in profiles for s in p.tracking.stacks})
        where = f" in region {region!r}" if region else ""
        listed = ", ".join(map(str, have[:12])) + (", ..." if len(have) > 12 else "")
        raise HeapscopeError(f"no tracked allocation of {sizes}{where} (tracked sizes: "
                             f"{listed or 'none'}; record them with `heapscope record --track "
                             f"--sizes SPEC`)")
    return merged


def profile_entries(p: Profile, sizes: SizeSet, region: Optional[str],
                    sym: Symbolizer) -> List[TrackedEntry]:
    """One tracked profile's symbolized entries of the selection, merged by key."""
    chosen = [s for s in p.tracking.stacks if s.size in sizes and region_matches(s.region, region)]
    if not chosen:
        return []
    resolved = sym.resolve(p, {a for s in chosen for a in s.frames})
    # an address's identity worked out once (a deep program's 40,000 entries share
    # their frames: a million identity() calls otherwise)
    identities = {a: tuple(identity(f) for f in frames) for a, frames in resolved.items()}
    entries = []
    for s in chosen:
        frames = tuple(f for a in s.frames for f in resolved[a])
        entry = TrackedEntry(s.region, s.size, frames, s.life,
                             None if frames else no_stack_reason(p, s.size, s.region),
                             getattr(s, "sampled", None))
        entry.__dict__["key"] = (s.region, s.size,      # the cached `key`, known already
                                 tuple(i for a in s.frames for i in identities[a]))
        entries.append(entry)
    return merge_entries([entries])


def merge_entries(groups: Iterable[List[TrackedEntry]]) -> List[TrackedEntry]:
    """Entries of one path (same region, size and frame identities) added up: the first
    one's frames, the lifetimes summed (several processes, or stacks that differed only
    below the symbol level)."""
    merged: Dict[tuple, List[TrackedEntry]] = {}
    for entries in groups:
        for e in entries:
            merged.setdefault(e.key, []).append(e)
    out = []
    for key, same in merged.items():
        if len(same) == 1:
            out.append(same[0])
            continue
        first = same[0]
        # sampled figures add up only when every part has them (exact parts: none)
        sampled = (None if any(e.sampled is None for e in same)
                   else sum_lifetimes([e.sampled for e in same]))
        entry = TrackedEntry(first.region, first.size, first.frames,
                             sum_lifetimes([e.life for e in same]), first.no_stack, sampled)
        entry.__dict__["key"] = key
        out.append(entry)
    return out


def tracking_settings(profiles: Sequence[Profile]) -> dict:
    """The tracking parameters, as the documents carry them (from the first profile;
    a note when the profiles disagree)."""
    t = profiles[0].tracking
    return dict(source=t.source, temporary_max_between=t.temporary_max_between,
                temporary_max_ns=t.temporary_max_ns,
                untracked=sum(p.tracking.untracked for p in profiles),
                untracked_bytes=untracked_bytes(profiles),
                peak_lower_bound=any(p.tracking.peak_is_lower_bound for p in profiles),
                table_bytes=sum(p.tracking.table_bytes for p in profiles))


def untracked_bytes(profiles: Sequence[Profile]) -> Optional[int]:
    """Requested bytes of the blocks left out of tracking; None when a profile's
    recorder did not say (it left blocks out, before TRACK_UNTRACKED)."""
    values = [p.tracking.untracked_bytes for p in profiles]
    return None if any(v is None for v in values) else sum(values)


def tracking_notes(profiles: Sequence[Profile], sym: Symbolizer) -> List[str]:
    notes = list(sym.notes)
    bounds = {(p.tracking.temporary_max_between, p.tracking.temporary_max_ns) for p in profiles}
    if len(bounds) > 1:
        notes.append("the profiles were recorded with different temporary bounds; "
                     "the first profile's are shown")
    untracked = sum(p.tracking.untracked for p in profiles)
    if untracked:
        nbytes = untracked_bytes(profiles)
        of = f" of {nbytes:,} bytes" if nbytes is not None else " (their bytes not recorded)"
        notes.append(f"{untracked:,} allocation{'s' if untracked != 1 else ''}{of} "
                     f"{'were' if untracked != 1 else 'was'} not tracked "
                     f"(tracking table full: record with a larger --track-max-blocks) and "
                     f"{'are' if untracked != 1 else 'is'} missing from these figures; the heap "
                     f"peak is a lower bound")
    return notes


def frames_json(frames: Sequence[Frame], depth: int = 0) -> List[dict]:
    return [f.to_json() for f in (frames[:depth] if depth else frames)]


def load_tracked(profiles: Sequence[Profile], size: Optional[str], region: Optional[str],
                 per_process: bool = False):
    """(the tracked ones of `profiles`, the selected entries merged over them, the
    symbolizer); with per_process the entries are None (the caller selects per profile)."""
    sizes = SizeSet(size)
    profiles = require_tracking(profiles)
    sym = Symbolizer()
    entries = None if per_process else tracked_entries(profiles, sizes, region, sym)
    return profiles, entries, sym


def document_header(profiles: Sequence[Profile], sym: Symbolizer, size: Optional[str],
                    region: Optional[str], top: int, depth: int) -> dict:
    """processes, filters, tracking settings and notes: the fields every tracking
    document starts with (docs/analysis-formats.md)."""
    return dict(processes=[describe(p) for p in profiles],
                filters=dict(size=size or "all", region=region, top=top, depth=depth),
                tracking=tracking_settings(profiles), notes=tracking_notes(profiles, sym),
                sampling=sampling.describe(profiles),
                record_for_stacks=record_for_stacks(profiles, SizeSet(size), region))


def record_for_stacks(profiles: Sequence[Profile], sizes: SizeSet, region: Optional[str]) -> Optional[str]:
    """The `heapscope record` line that gives call paths to the selected sizes tracked
    without them (not selected, or no sample among them); None when there is none."""
    bare = sorted({s.size for p in profiles for s in p.tracking.stacks
                   if not s.frames and s.size in sizes and region_matches(s.region, region)
                   and no_stack_reason(p, s.size, s.region) in ("not-selected", "not-sampled")})
    if not bare:
        return None
    cmd = next((p.cmdline for p in profiles if p.cmdline), None) or ["PROGRAM", "ARGS..."]
    spec = ",".join(map(str, bare)) if len(bare) <= 12 else "all"
    return (f"heapscope record --track --sizes {spec}" + (f" --regions {region}" if region else "")
            + f" -- {shlex.join(cmd)}")
