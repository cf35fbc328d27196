"""The order of stack trace types: the most blocks first, then by region path, size and
frames (a tuple, compared as tuples compare: element by element, a prefix first).

Sorting tens of thousands of types by the tuple (-count, region, size, frames) spends
most of its time comparing tuples whose first three fields tie (thousands of types of
one size allocated once). Here each type's key is one bytes object, compared by
memcmp: the count as 2^64 - 1 - count, the region as its rank among the region paths,
the size as a big-endian u64, then the frames: return addresses as big-endian u64s
(most_first), or any values comparable with each other as the big-endian u32 of their
rank among all of them (value_ranks: symbolized frames' identities, analysis.addresses).
A figure that does not fit sorts by the tuple instead.
"""
import struct
from typing import Dict, Hashable, List, Sequence, Tuple

_MAX = (1 << 64) - 1
_HEAD = struct.Struct(">QIQ")
_PACKERS: Dict[Tuple[str, int], struct.Struct] = {}


def packer(kind: str, n: int) -> struct.Struct:
    """A cached Struct of n big-endian values of kind "Q" or "I"."""
    p = _PACKERS.get((kind, n))
    if p is None:
        p = _PACKERS[(kind, n)] = struct.Struct(f">{n}{kind}")
    return p


def _by_tuple(keys) -> List[int]:
    return sorted(range(len(keys)), key=lambda i: (-keys[i][0],) + tuple(keys[i][1:]))


def packed_order(heads: Sequence[Tuple[int, str, int]], tails: Sequence[bytes]) -> List[int]:
    """Indices in the order of (-count, region, size, tail) for heads (count, region,
    size): the tails are bytes that compare as what they stand for."""
    ranks = {r: i for i, r in enumerate(sorted({h[1] for h in heads}))}
    pack = _HEAD.pack
    packed = [pack(_MAX - count, ranks[region], size) + tail
              for (count, region, size), tail in zip(heads, tails)]
    return sorted(range(len(packed)), key=packed.__getitem__)


def most_first(keys: Sequence[Tuple[int, str, int, Tuple[int, ...]]]) -> List[int]:
    """The indices of `keys` (count, region, size, frames of u64 addresses) in the order
    of sorted(keys, key=lambda k: (-k[0], k[1], k[2], k[3]))."""
    try:
        return packed_order([k[:3] for k in keys],
                            [packer("Q", len(k[3])).pack(*k[3]) for k in keys])
    except struct.error:     # a figure past 64 bits (a count summed over many files)
        return _by_tuple(keys)


def value_ranks(values) -> Dict[Hashable, bytes]:
    """Each distinct value -> its rank among them, as 4 big-endian bytes."""
    return {v: struct.pack(">I", i) for i, v in enumerate(sorted(set(values)))}
