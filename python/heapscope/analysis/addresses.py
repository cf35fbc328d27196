"""A profile's return addresses symbolized once, and stack trace types merged by their
symbolized frames through them.

The types of a profile share their addresses (an Octave recording: 56,000 types, 1.3 M
frames, 11,000 distinct addresses), so each address gets its frames as one tuple and
their identities (analysis.stacks.identity) as another; a type's frames and its key
are those tuples chained, without a Python step per frame. Merging types of several
profiles (weighted_stacks) keys each by bytes: the rank of each frame's identity among
all of them, 4 bytes a frame, which are equal when the identities are and sort as
they do (profile.ordering).
"""
import struct
from itertools import chain
from typing import Dict, Iterable, List, Sequence, Tuple

from heapscope.analysis.stacks import WeightedStack, identity
from heapscope.profile import ordering
from heapscope.profile.model import Profile, maker
from heapscope.symbolize import Frame, Symbolizer

weighted = maker(WeightedStack)


class Addresses:
    """The frames and identities of the return addresses of one profile's types (stack
    types or tracked stacks: anything with frames), as far as covered."""

    def __init__(self, sym: Symbolizer, profile: Profile):
        self.sym, self.profile = sym, profile
        self.frames: Dict[int, Tuple[Frame, ...]] = {}
        self.identities: Dict[int, tuple] = {}

    def cover(self, types: Iterable) -> "Addresses":
        """Symbolize the addresses of `types` not symbolized yet."""
        missing = set(chain.from_iterable(t.frames for t in types)).difference(self.frames)
        if missing:
            for a, f in self.sym.resolve(self.profile, missing).items():
                self.frames[a] = f = tuple(f)
                self.identities[a] = tuple(map(identity, f))
        return self

    def frames_of(self, addresses: Sequence[int]) -> Tuple[Frame, ...]:
        return tuple(chain.from_iterable(map(self.frames.__getitem__, addresses)))

    def key_of(self, addresses: Sequence[int]) -> tuple:
        """The identities of the frames of `addresses` (WeightedStack.key's third part)."""
        return tuple(chain.from_iterable(map(self.identities.__getitem__, addresses)))


def addresses_of(sym: Symbolizer, profile: Profile, types: Iterable) -> Addresses:
    """The profile's Addresses covering `types`, one per profile and symbolizer: the
    HTML page's stack types and tracked stacks are the same addresses."""
    memo = sym.derived.setdefault(__name__, {})
    found = memo.get(id(profile))
    if found is None or found.profile is not profile:
        found = memo[id(profile)] = Addresses(sym, profile)
    return found.cover(types)


def merged_stacks(chosen: List[Tuple[List, Addresses]]) -> List[WeightedStack]:
    """analysis.stacks.merge_stacks of the WeightedStacks of the stack types of several
    profiles, (types, their profile's Addresses) each, without making them first:
    added up by region, size and frame identities (the first one's frames kept), the
    most allocations first, then by (region, size, identities); paths: how many
    types each adds up."""
    ranks = ordering.value_ranks(i for _, a in chosen for ids in a.identities.values() for i in ids)
    merged: Dict[tuple, list] = {}
    for types, addresses in chosen:
        packed = {a: b"".join(map(ranks.__getitem__, ids)) for a, ids in addresses.identities.items()}
        get = packed.__getitem__
        for t in types:
            key = (t.region, t.size, b"".join(map(get, t.frames)))
            acc = merged.get(key)
            if acc is None:
                merged[key] = [t, addresses, t.count, t.bytes, t.samples, 1]
            else:
                acc[2] += t.count
                acc[3] += t.bytes
                acc[4] += t.samples
                acc[5] += 1
    keys = list(merged)
    values = list(merged.values())
    try:
        order = ordering.packed_order([(v[2], k[0], k[1]) for k, v in zip(keys, values)],
                                      [k[2] for k in keys])
    except struct.error:    # a count past 64 bits: by the tuples themselves
        order = sorted(range(len(keys)), key=lambda i: (-values[i][2], keys[i][0], keys[i][1],
                                                        values[i][1].key_of(values[i][0].frames)))
    out = []
    for i in order:
        first, addresses, count, nbytes, samples, paths = values[i]
        out.append(weighted(addresses.frames_of(first.frames), count, nbytes, first.region,
                            first.size, samples, paths))
    return out
