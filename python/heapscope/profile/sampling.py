"""Stacks recorded by sampling (record --sample-bytes N): sample counts -> estimates.

The recorder picks each allocation of s > 0 bytes with probability
p(s) = 1 - exp(-s/N), independently (profile_format.h, SAMPLING). A stack type of
size s seen k times therefore stands for k / p(s) allocations in expectation (the
Horvitz-Thompson estimate). The counts per size and region are exact, so among the
types of one size and region, which share p, the reader splits that exact total in
proportion to their samples: the same estimate up to the noise of the total, minus
that noise (a size with one path gets its exact count). Each type's count and bytes
become the estimate and k stays in StackType.samples, so every analysis reads
allocations whatever the mode; analysis/sampling.py gives the intervals.
"""
import math
from dataclasses import replace
from typing import Dict, List, Tuple

from heapscope.profile.model import StackType


def probability(size: int, mean_bytes: int) -> float:
    """The chance that one allocation of `size` bytes was sampled."""
    if size <= 0 or mean_bytes <= 0:
        return 0.0
    return -math.expm1(-size / mean_bytes)


def estimated(types: List[StackType], mean_bytes: int,
              size_counts: Dict[Tuple[str, int], int]) -> List[StackType]:
    """The types (count = samples) with their counts and bytes estimated; size_counts:
    the exact allocations per (region, size)."""
    samples: Dict[Tuple[str, int], int] = {}
    for t in types:
        samples[(t.region, t.size)] = samples.get((t.region, t.size), 0) + t.count
    out = []
    for t in types:
        total = size_counts.get((t.region, t.size))
        if total:
            count = round(total * t.count / samples[(t.region, t.size)])
        else:
            p = probability(t.size, mean_bytes)
            count = round(t.count / p) if p > 0 else 0
        out.append(replace(t, count=count, bytes=count * t.size, samples=t.count))
    out.sort(key=lambda s: (-s.count, s.region, s.size, s.frames))
    return out
