"""How far a sampled stack type's estimate can be trusted (record --sample-bytes).

The reader has already turned each type's samples k into the estimate k / p
(profile/sampling.py). Since every allocation is a sample independently with a small
probability p, k is (very nearly) Poisson with mean p * n for the type's true count
n, so a 95% interval for n is the exact (Garwood) Poisson interval for the mean,
divided by p. Its chi-square quantiles come from the Wilson-Hilferty approximation,
good to about 1% from the first sample on, which is well inside the interval's own
width; k = 0 has the closed form [0, -ln(0.025)]. The interval is then narrowed by
what is known exactly: a type holds at least its k samples, and at most every
allocation of its size and region (the exact counts).
"""
import math
from statistics import NormalDist
from typing import Optional, Sequence, Tuple

from heapscope.profile.model import Profile
from heapscope.profile.sampling import probability

CONFIDENCE = 0.95


def sample_mean(profiles: Sequence[Profile]) -> int:
    """The mean bytes between samples of sampled profiles, 0 when the stacks are exact
    (with several means, the largest: the widest intervals)."""
    return max((p.settings.get("sample_bytes", 0) for p in profiles), default=0)


def _chi2_quantile(q: float, dof: float) -> float:
    z = NormalDist().inv_cdf(q)
    h = 2.0 / (9.0 * dof)
    return dof * max(0.0, 1.0 - h + z * math.sqrt(h)) ** 3


def poisson_interval(k: int, confidence: float = CONFIDENCE) -> Tuple[float, float]:
    """Interval for the mean of a Poisson count that came out k."""
    alpha = 1.0 - confidence
    low = 0.0 if k == 0 else _chi2_quantile(alpha / 2, 2 * k) / 2
    high = (-math.log(alpha / 2) if k == 0 else _chi2_quantile(1 - alpha / 2, 2 * k + 2) / 2)
    return low, high


def count_interval(samples: int, size: int, mean_bytes: int,
                   exact_total: Optional[int] = None) -> Tuple[int, int]:
    """Allocations of a type with `samples` samples of `size` bytes: (low, high)."""
    p = probability(size, mean_bytes)
    if p <= 0:
        return 0, exact_total if exact_total is not None else 0
    low, high = poisson_interval(samples)
    lo, hi = max(samples, math.floor(low / p)), math.ceil(high / p)
    if exact_total is not None:
        hi, lo = min(hi, exact_total), min(lo, exact_total)
    return lo, hi


def describe(profiles: Sequence[Profile]) -> Optional[dict]:
    """What a document says about sampling: None when the stacks are exact."""
    mean = sample_mean(profiles)
    if not mean:
        return None
    return dict(mean_bytes=mean, confidence=CONFIDENCE,
                method="byte-based Poisson sampling; estimate = samples / (1 - exp(-size/mean))")
