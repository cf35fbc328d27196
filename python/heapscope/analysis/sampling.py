"""How far a sampled stack type's estimate can be trusted (record --sample-bytes).

The recorder samples each allocation of s bytes independently with the same
probability p(s) (profile/sampling.py), and counts every allocation exactly. Take one
cell, the allocations of one size in one region (all the processes merged, when they
sampled with the same mean): T allocations counted, K of them samples, k of those on
the type's path. Given K, which allocations were sampled is a uniform random choice of
K among the T, whatever p was, so k is hypergeometric: K draws from T of which the
type holds n. That is the whole model:

- estimate  n = T k / K (profile/sampling.py; unbiased given K, for seen and unseen
  types alike: an unseen type's estimate is 0);
- interval  the exact hypergeometric interval, the n for which k is not in either
  2.5% tail (hypergeometric_interval): it holds the estimate, runs from k to
  T - (K - k), and needs no approximation from the first sample on (one sample of
  a size counted 340 times: 9..340);
- unseen    the allocations of types no sample saw: a sum over types of n 1[k = 0],
  independent per type, whose mean is the Good-Turing f1 (1-p)/p (f1: types seen
  once) and whose spread is bounded from f1 and f2 (unseen_bound).

Sums over cells (a call-graph vertex over sizes) are estimates without an interval
here. Different means in one merge break "uniform given K": pooled() says so.
"""
import math
from statistics import NormalDist
from dataclasses import replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from heapscope.analysis.stacks import WeightedStack
from heapscope.errors import HeapscopeError
from heapscope.profile.model import Profile
from heapscope.profile.sampling import probability

CONFIDENCE = 0.95


def sample_mean(profiles: Sequence[Profile]) -> int:
    """The mean bytes between samples of sampled profiles, 0 when the stacks are exact
    (with several means, the largest)."""
    return max((p.settings.get("sample_bytes", 0) for p in profiles), default=0)


def one_mean(profiles: Sequence[Profile]) -> int:
    """The one sample mean of profiles merged into one sample; an error when sampled
    profiles of different means are merged (their samples are no longer a uniform
    choice among the allocations: give them one at a time)."""
    means = sorted({p.settings.get("sample_bytes", 0) for p in profiles})
    if len(means) > 1 and means[-1]:
        raise HeapscopeError(
            "these profiles were recorded with different stack sampling ("
            + ", ".join(f"--sample-bytes {m}" if m else "exact stacks" for m in means)
            + "): their sampled stacks cannot be merged into one estimate; read each "
              "recording on its own, or use --per-process")
    return means[-1] if means else 0


def cell_totals(profiles: Sequence[Profile]) -> Tuple[Dict[Tuple[str, int], int],
                                                      Dict[Tuple[str, int], int]]:
    """(region, size) -> allocations counted (exact) and -> samples, over `profiles`."""
    counted: Dict[Tuple[str, int], int] = {}
    samples: Dict[Tuple[str, int], int] = {}
    for p in profiles:
        for key, n in p.size_counts.items():
            counted[key] = counted.get(key, 0) + n
        for t in p.stack_types:
            key = (t.region, t.size)
            samples[key] = samples.get(key, 0) + t.samples
    return counted, samples


def ratio_estimate(k: int, K: int, T: int) -> int:
    """T k / K rounded: the type's allocations (T when K is 0 and k is too: nothing seen)."""
    return round(T * k / K) if K else 0


def pooled(stacks: List[WeightedStack], profiles: Sequence[Profile]) -> List[WeightedStack]:
    """Merged stacks of several sampled profiles with their estimates taken over the
    merge: T k / K with T, K and k summed over the processes, the estimate that goes
    with the intervals (each process's own split, added up, can fall outside them). As
    they were when the profiles sampled with different means (no pooled estimate)."""
    means = {p.settings.get("sample_bytes", 0) for p in profiles}
    if len(profiles) < 2 or len(means) != 1 or not next(iter(means)):
        return stacks
    counted, samples = cell_totals(profiles)
    out = []
    for s in stacks:
        key = (s.region, s.size)
        if s.samples and counted.get(key):
            count = ratio_estimate(s.samples, samples[key], counted[key])
            s = replace(s, count=count, bytes=count * s.size)
        out.append(s)
    out.sort(key=lambda s: (-s.count, s.key))
    return out


# ---- the hypergeometric distribution's tails ----

def _log_choose(n: int, r: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(r + 1) - math.lgamma(n - r + 1)


def _log_pmf(x: int, T: int, n: int, K: int) -> float:
    return _log_choose(n, x) + _log_choose(T - n, K - x) - _log_choose(T, K)


def _tail(x: int, T: int, n: int, K: int, step: int) -> float:
    """P(X = x) + P(X = x + step) + ... (step -1: the lower tail, +1: the upper), the
    terms from x outwards, stopped once they no longer count (they shrink past the mode)."""
    lo, hi = max(0, K - (T - n)), min(n, K)
    if x < lo:
        x = lo if step > 0 else lo - 1
    if x > hi:
        x = hi if step < 0 else hi + 1
    if not lo <= x <= hi:
        return 0.0
    term = math.exp(_log_pmf(x, T, n, K))
    total = term
    while True:
        if step < 0:
            if x <= lo:
                break
            term *= x * (T - n - K + x) / ((n - x + 1) * (K - x + 1))
            x -= 1
        else:
            if x >= hi:
                break
            term *= (n - x) * (K - x) / ((x + 1) * (T - n - K + x + 1))
            x += 1
        total += term
        if term < 1e-17 * total:
            break
    return min(total, 1.0)


def _at_most(k: int, T: int, n: int, K: int) -> float:
    """P(X <= k), from the shorter tail."""
    if n * K <= k * T:                        # k at or above the mean: the upper tail is short
        return 1.0 - _tail(k + 1, T, n, K, +1)
    return _tail(k, T, n, K, -1)


def _at_least(k: int, T: int, n: int, K: int) -> float:
    return 1.0 - _at_most(k - 1, T, n, K) if k > 0 else 1.0


def hypergeometric_interval(k: int, K: int, T: int, confidence: float = CONFIDENCE,
                            seen: bool = True) -> Tuple[int, int]:
    """The exact interval for n, the allocations of a type k of whose allocations are
    among K samples drawn without replacement from T: every n for which k is in
    neither tail of (1 - confidence)/2. With `seen` (a type that is listed because a
    sample saw it), the tails are those of k given k >= 1: among the listed types the
    rare ones that happened to be sampled are many, and their interval must reach down
    to them (one sample: 1..). k = 0 runs from 0, k = K up to T."""
    if not 0 <= k <= K <= T:
        raise ValueError(f"samples {k} of {K} of {T}")
    if K == 0:
        return 0, T
    tail = (1.0 - confidence) / 2
    least, most = k, T - (K - k)
    seen = seen and k > 0

    def none(n: int) -> float:                  # P(X = 0) when only seen types are listed
        return math.exp(_log_pmf(0, T, n, K)) if seen and K <= T - n else 0.0

    def upper_tail(n: int) -> float:            # P(X >= k | listed)
        z = none(n)
        return _at_least(k, T, n, K) / (1.0 - z) if z < 1.0 else 1.0

    def lower_tail(n: int) -> float:            # P(X <= k | listed)
        z = none(n)
        return (_at_most(k, T, n, K) - z) / (1.0 - z) if z < 1.0 else 1.0

    def search(lo: int, hi: int, ok) -> int:    # the first n in [lo, hi] with ok(n), else hi + 1
        hi += 1
        while lo < hi:
            mid = (lo + hi) // 2
            if ok(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo
    low = least if k == 0 or (seen and k == 1) else search(least, most, lambda n: upper_tail(n) > tail)
    high = most if k == K else search(least, most, lambda n: lower_tail(n) <= tail) - 1
    return low, high


def count_interval(samples: int, cell_samples: int, cell_count: int) -> Tuple[int, int]:
    """A type with `samples` of the cell's `cell_samples` samples, the cell counting
    `cell_count` allocations: (low, high) of its allocations."""
    return hypergeometric_interval(samples, cell_samples, cell_count)


def _poisson_upper(f: int, confidence: float) -> float:
    """Upper confidence limit of a Poisson mean that came out f (Garwood; chi-square
    quantile by Wilson-Hilferty, good to about 1% from f = 0 on)."""
    if f == 0:
        return -math.log(1.0 - confidence)
    dof = 2 * f + 2
    z = NormalDist().inv_cdf(confidence)
    h = 2.0 / (9.0 * dof)
    return dof * max(0.0, 1.0 - h + z * math.sqrt(h)) ** 3 / 2


# The unseen bound's two levels: f1 and f2 at their 90% upper limits, the unseen
# allocations' deviation at 1.645 standard deviations. Chosen by simulation over type
# mixtures (one to a thousand types of 0.02/p to 10/p allocations, beside a big type
# or not, geometric and singleton tails): every mixture >= 96% covered
# (tests/unit/test_sampling_intervals.py).
_UNSEEN_LIMITS = 0.90
_UNSEEN_Z = 1.6448536269514722


def unseen_bound(type_samples: Iterable[int], cell_count: int, size: int,
                 mean_bytes: int) -> Tuple[int, int]:
    """The allocations of a cell held by types no sample saw: (Good-Turing estimate,
    upper end of its 95% interval). type_samples: the samples of each seen type.

    Each type is unseen with probability q = (1-p)^n, independently, so the unseen
    allocations M = sum n 1[k = 0] have mean sum n q = E[f1] (1-p)/p and variance at
    most sum n^2 q = E[2 f2 c^2 + f1 c] (c = (1-p)/p, f_j: types seen j times); a
    type seen once or twice is the evidence of the ones not seen. f1 and f2 are sums of
    independent indicators (less spread than Poisson), so their Poisson upper limits
    are safe stand-ins for their means; with none seen once, the bound is still what
    one unseen type may hold."""
    ks = list(type_samples)
    K = sum(ks)
    p = probability(size, mean_bytes)
    room = cell_count - K
    if p <= 0 or room <= 0:
        return 0, max(room, 0)
    f1, f2 = ks.count(1), ks.count(2)
    c = (1.0 - p) / p
    u1, u2 = _poisson_upper(f1, _UNSEEN_LIMITS), _poisson_upper(f2, _UNSEEN_LIMITS)
    high = c * u1 + _UNSEEN_Z * math.sqrt(2 * c * c * u2 + c * u1 + c * c * u1)
    return min(round(c * f1), room), min(math.ceil(high), room)


def describe(profiles: Sequence[Profile]) -> Optional[dict]:
    """What a document says about sampling: None when the stacks are exact."""
    mean = sample_mean(profiles)
    if not mean:
        return None
    return dict(mean_bytes=mean, confidence=CONFIDENCE,
                method="byte-based Poisson sampling; per (size, region): estimate = allocations "
                       "counted x samples of the type / samples of the size; interval: exact "
                       "hypergeometric; unseen types: Good-Turing bound")
