"""How lifetime histograms and durations read in text: a bin's range, the span of the
non-empty bins, the histogram as a sparkline, nanoseconds with a unit, the temporary
bound in one phrase. The bins themselves: analysis.histogram."""
from typing import Optional, Sequence

from heapscope.analysis.histogram import bin_range, nonzero_span
from heapscope.render.text import sparkline

_TIME_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns"))


def histogram_line(hist: Sequence[int]) -> str:
    """One character per bin from the first to the last non-empty bin, height by count
    relative to the fullest bin; an empty bin inside the span is a space."""
    span = nonzero_span(hist)
    if span is None:
        return ""
    return sparkline(list(hist[span[0]:span[1] + 1]), top=max(hist))


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


def bound_text(max_between: int, max_ns: Optional[int]) -> str:
    """How a temporary is defined, in one phrase."""
    others = "no other allocation" if max_between == 0 else \
        f"at most {max_between:,} other allocation{'s' if max_between != 1 else ''}"
    text = f"freed with {others} of the same thread in between"
    if max_ns:
        text += f" and within {format_ns(max_ns)}"
    return text
