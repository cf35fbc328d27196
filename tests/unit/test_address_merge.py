"""Stack types and tracked stacks merged at the level of return addresses
(analysis/addresses.py, tracked.merged_entries) give what the merge frame by frame
gives (analysis.stacks.merge_stacks, tracked.merge_entries over each profile's
entries): the same stacks, counts, frames and order, on profiles whose addresses
symbolize to inlined chains, to the same function from different addresses, and to
nothing. The symbolizer is replaced by a table, so each case is exactly what it says."""
import random

from heapscope.analysis import tracked
from heapscope.analysis.addresses import Addresses, merged_stacks
from heapscope.analysis.selection import SizeSet
from heapscope.analysis.stacks import WeightedStack, merge_stacks
from heapscope.profile.model import LIFETIME_BINS, Lifetimes, Profile, StackType, TrackedStack
from heapscope.symbolize import Frame

rng = random.Random(7)


def frames_of(address):
    """Addresses 100-109: one function each, 110-114: an inlined call in f3 (two frames),
    115-119: f4 again from other addresses (same identity, other offsets), 120: unknown."""
    if address < 110:
        return [Frame(f"f{address % 5}", "a.c", address, "/bin/prog", address)]
    if address < 115:
        return [Frame("inl", "i.h", 7, "/bin/prog", address, inlined=True),
                Frame("f3", "a.c", 103, "/bin/prog", address)]
    if address < 120:
        return [Frame("f4", "a.c", 104, "/lib/x.so", address)]
    return [Frame("??", "", 0, "", address)]


class TableSymbolizer:
    def __init__(self):
        self.derived, self.notes = {}, []

    def resolve(self, profile, addresses):
        return {a: frames_of(a) for a in addresses}


def random_stacks(n):
    out = []
    for _ in range(n):
        frames = tuple(rng.randrange(100, 121) for _ in range(rng.randrange(4)))
        out.append((rng.choice(["(none)", "solve"]), rng.choice([16, 24]), frames,
                    rng.choice([1, 1, 2, 30])))
    return out


def profile(rows):
    p = Profile(path=f"p{rng.random()}")
    seen = {}
    for region, size, frames, count in rows:      # one type per (region, size, frames)
        seen[(region, size, frames)] = count
    p.stack_types = [StackType(r, s, c, c * s, f) for (r, s, f), c in seen.items()]
    return p


def test_merged_stacks_are_merge_stacks():
    sym = TableSymbolizer()
    profiles = [profile(random_stacks(300)) for _ in range(3)]
    chosen = [(p.stack_types, Addresses(sym, p).cover(p.stack_types)) for p in profiles]
    by_frame = merge_stacks([WeightedStack(tuple(f for a in t.frames for f in frames_of(a)),
                                           t.count, t.bytes, t.region, t.size, t.samples)
                             for p in profiles for t in p.stack_types])
    merged = merged_stacks(chosen)
    assert merged == by_frame
    assert len(merged) < sum(len(p.stack_types) for p in profiles)   # some did merge


def lifetimes(allocs):
    hist = tuple(rng.randrange(3) for _ in range(LIFETIME_BINS))
    peak = rng.choice([0, 0, 1, allocs])
    return Lifetimes(allocs, allocs // 2, allocs // 3, hist, hist[::-1], peak, peak * 16,
                     allocs // 4, allocs // 4 * 16)


def tracked_profile(rows):
    p = profile(rows)
    p.settings = dict(stack_sizes="all")
    p.tracking = type("T", (), {})()
    p.tracking.stacks = [TrackedStack(t.region, t.size, t.frames, lifetimes(t.count))
                         for t in p.stack_types]
    return p


def entries_by_frame(p):
    """The entries of a profile one per stack, then merged: the reference."""
    out = []
    for s in p.tracking.stacks:
        frames = tuple(f for a in s.frames for f in frames_of(a))
        e = tracked.TrackedEntry(s.region, s.size, frames, s.life,
                                 None if frames else tracked.no_stack_reason(p, s.size, s.region))
        out.append(e)
    return tracked.merge_entries([out])


def test_merged_entries_are_merge_entries_of_each_profiles_entries():
    sym = TableSymbolizer()
    profiles = [tracked_profile(random_stacks(300)) for _ in range(3)]
    every = SizeSet(None)
    parts = tracked.tracked_parts(profiles, every, None, sym)
    keys = tracked.part_keys(parts)
    per_profile = [entries_by_frame(p) for p in profiles]
    expected = tracked.merge_entries(per_profile)
    got, per_part = tracked.merged_entries(parts, keys, holders=True)
    assert got == tracked.merged_entries(parts, keys)
    assert [(e.key, e.frames, e.life, e.no_stack) for e in got] == \
        [(e.key, e.frames, e.life, e.no_stack) for e in expected]
    assert len(got) < sum(map(len, per_profile))
    # each profile's peak holders: its own entries with blocks live at the peak (in an
    # order of their own: the peak sorts them)
    for holders, own in zip(per_part, per_profile):
        assert sorted((e.key, e.frames, e.life) for e in holders) == \
            sorted((e.key, e.frames, e.life) for e in own if e.life.live_at_peak)
        assert holders
