"""Log-scale lifetime histograms (profile.model.lifetime_bin): bin ranges, percentiles, bars.

Bin 0 holds the value 0; bin b >= 1 holds [2^(b-1), 2^b - 1]; the last bin is open
(everything from 2^(LIFETIME_BINS-2) up). The recorder keeps only the bins, so a
percentile is known to lie in a bin: it is reported as that bin's range, never as a
made-up exact number.
"""
from typing import List, Optional, Sequence, Tuple

from heapscope.profile.model import LIFETIME_BINS

BAR_CHARS = "▁▂▃▄▅▆▇█"


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


def sparkline(hist: Sequence[int]) -> str:
    """One character per bin from the first to the last non-empty bin, height by count
    relative to the fullest bin; an empty bin inside the span is a space."""
    span = nonzero_span(hist)
    if span is None:
        return ""
    top = max(hist)
    out = []
    for c in hist[span[0]:span[1] + 1]:
        if c == 0:
            out.append(" ")
        else:
            out.append(BAR_CHARS[min(len(BAR_CHARS) - 1, (c * len(BAR_CHARS) - 1) // top)])
    return "".join(out)


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


# ---- how the ranges read in text ----
_TIME_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns"))


def format_ns(ns: int) -> str:
    """1536 -> "1.5us"; 0 -> "0ns"."""
    for scale, unit in _TIME_UNITS:
        if ns >= scale:
            value = ns / scale
            return f"{value:.3g}{unit}" if value < 1000 else f"{value:.0f}{unit}"
    return "0ns"


def range_text(lo: int, hi: Optional[int], time: bool) -> str:
    """A bin's range: "0", "4-7", ">=2^62" for counts; "1.02us-2.05us" for times (upper
    bound exclusive, hi + 1)."""
    if time:
        if hi is None:
            return f">={format_ns(lo)}"
        if lo == hi:
            return format_ns(lo)
        return f"{format_ns(lo)}-{format_ns(hi + 1)}"
    if hi is None:
        return f">={lo:,}"
    return f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"


def span_text(first: int, last: int, time: bool) -> str:
    """From the lowest value of bin `first` to the top of bin `last`: "0 .. 7", "64ns .. 2.05us"
    (times: upper bound exclusive)."""
    lo, _ = bin_range(first)
    low, high = bin_range(last)
    if lo == high:
        return format_ns(lo) if time else f"{lo:,}"
    start = format_ns(lo) if time else f"{lo:,}"
    if high is None:
        return f"{start} .. >={format_ns(low) if time else f'{low:,}'}"
    return f"{start} .. {format_ns(high + 1) if time else f'{high:,}'}"
