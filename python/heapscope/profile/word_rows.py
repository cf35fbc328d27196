"""The two big tables of a snapshot, STACK_TYPES and TRACK_TYPES, cut into rows fast.

Their rows have a variable length (frames[depth]; histogram bins, one per bit of a
mask), so the format table's codec (layout.py) reads them a field at a time in
Python: an Octave recording's 56,000 stack types and 1.3 M frames, twice over, were
most of the time of reading its profile. Every field after the chunk's u32 count is a
multiple of 8 bytes, so here the payload after the count is one array of little-endian
u64 words (numpy) and each row is a few indexings and a slice of it. A payload that
does not cut cleanly into its count of rows (short, with bytes left over, a depth
past its end) returns None: the caller hands it to the codec, which reads it or
raises the Malformed it always raised.
"""
import struct
from typing import Dict, List, Optional, Tuple

import numpy as np

from heapscope.profile.model import EMPTY_HIST, LIFETIME_BINS

_COUNT = struct.Struct("<I")
_LOW = 0xFFFFFFFF


def _words(payload) -> Tuple[Optional[list], int]:
    """(the u64 words after the u32 count, as Python ints; the count), or (None, 0)."""
    if len(payload) < 4 or (len(payload) - 4) % 8:
        return None, 0
    (n,) = _COUNT.unpack_from(payload)
    return np.frombuffer(payload, dtype="<u8", offset=4).tolist(), n


def stack_rows(payload) -> Optional[List[tuple]]:
    """STACK_TYPES rows (region, size, count, bytes, frames) or None (see above)."""
    w, n = _words(payload)
    if w is None:
        return None
    end, i = len(w), 0
    out = []
    append = out.append
    for _ in range(n):
        if i + 4 > end:
            return None
        head = w[i]
        j = i + 4 + (head >> 32)
        if j > end:
            return None
        append((head & _LOW, w[i + 1], w[i + 2], w[i + 3], tuple(w[i + 4:j])))
        i = j
    return out if i == end else None


class _Bins:
    """Histograms from (mask, nonzero bins), each distinct one made once and shared:
    most rows of a table repeat a few shapes (one block freed young), and a block never
    freed has EMPTY_HIST, which sums skip (analysis.tracked)."""

    def __init__(self):
        self.slots: Dict[int, Tuple[int, ...]] = {}   # mask -> its bits, low first
        self.made: Dict[tuple, Tuple[int, ...]] = {(0, ()): EMPTY_HIST}

    def bits(self, mask: int) -> Tuple[int, ...]:
        found = self.slots.get(mask)
        if found is None:
            found = self.slots[mask] = tuple(b for b in range(mask.bit_length()) if mask >> b & 1)
        return found

    def hist(self, mask: int, values: tuple) -> Tuple[int, ...]:
        key = (mask, values)
        found = self.made.get(key)
        if found is None:
            hist = [0] * LIFETIME_BINS
            for b, v in zip(self.bits(mask), values):
                hist[b] = v
            found = self.made[key] = tuple(hist)
        return found


def track_rows(payload) -> Optional[List[tuple]]:
    """TRACK_TYPES rows (region, size, frames, allocs, frees, temporaries, live_at_peak,
    live_at_end, extra_bytes, time_hist, between_hist), the histograms of 64 bins (a
    u64 mask names no bin past them), or None (see above)."""
    w, n = _words(payload)
    if w is None:
        return None
    end, i = len(w), 0
    bins = _Bins()
    out = []
    append = out.append
    for _ in range(n):
        if i + 10 > end:
            return None
        head = w[i]
        time_mask, between_mask = w[i + 8], w[i + 9]
        tb = bins.bits(time_mask)
        a = i + 10 + len(tb)
        b = a + len(bins.bits(between_mask))
        j = b + (head >> 32)
        if j > end:
            return None
        append((head & _LOW, w[i + 1], tuple(w[b:j]), w[i + 2], w[i + 3], w[i + 4], w[i + 5],
                w[i + 6], w[i + 7], bins.hist(time_mask, tuple(w[i + 10:a])),
                bins.hist(between_mask, tuple(w[a:b]))))
        i = j
    return out if i == end else None
