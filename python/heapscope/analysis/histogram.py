"""Log-scale lifetime histograms (profile.model.lifetime_bin): bin ranges, percentiles,
the non-empty bins as the documents carry them (how they read: render.histogram_text).

Bin 0 holds the value 0; bin b >= 1 holds [2^(b-1), 2^b - 1]; the last bin is open
(everything from 2^(LIFETIME_BINS-2) up). The recorder keeps only the bins, so a
percentile is known to lie in a bin: it is reported as that bin's range, never as a
made-up exact number.
"""
from typing import List, Optional, Sequence, Tuple

from heapscope.profile.model import LIFETIME_BINS


def bin_range(b: int) -> Tuple[int, Optional[int]]:
    """(lowest, highest) value of bin b, both inclusive; highest None for the open last bin."""
    if b == 0:
        return 0, 0
    if b >= LIFETIME_BINS - 1:
        return 1 << (LIFETIME_BINS - 2), None
    return 1 << (b - 1), (1 << b) - 1


def percentile_bin(hist: Sequence[int], percent: int) -> Optional[int]:
    """The bin holding the given percentile (1..100) of the values: the smallest bin whose
    cumulative count reaches ceil(percent * n / 100). None for an empty histogram."""
    n = sum(hist)
    if n == 0:
        return None
    want = max(1, (percent * n + 99) // 100)
    seen = 0
    for b, c in enumerate(hist):
        seen += c
        if seen >= want:
            return b
    return len(hist) - 1


def nonzero_span(hist: Sequence[int]) -> Optional[Tuple[int, int]]:
    """(first, last) non-empty bin, None when empty."""
    used = [b for b, c in enumerate(hist) if c]
    return (used[0], used[-1]) if used else None


def bins_json(hist: Sequence[int]) -> List[dict]:
    """The non-empty bins: [{"bin", "lo", "hi", "count"}] (hi inclusive, null when open)."""
    out = []
    for b, c in enumerate(hist):
        if c:
            lo, hi = bin_range(b)
            out.append(dict(bin=b, lo=lo, hi=hi, count=c))
    return out


def summary_json(hist: Sequence[int]) -> dict:
    """Count, median and p90 bins (with their ranges), and the non-empty bins."""
    def pct(percent):
        b = percentile_bin(hist, percent)
        if b is None:
            return None
        lo, hi = bin_range(b)
        return dict(bin=b, lo=lo, hi=hi)
    return dict(count=sum(hist), median=pct(50), p90=pct(90), bins=bins_json(hist))
