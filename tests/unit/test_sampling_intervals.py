"""The statistics of sampled stacks (analysis/sampling.py), apart from the recorder: the
hypergeometric interval against a brute-force sum of the distribution, its estimate
inside it, and the bound on the allocations of types no sample saw simulated over type
mixtures (the recorder's own samples are tested in tests/e2e/test_sampled_stacks.py)."""
from math import comb

import numpy as np
import pytest

from heapscope.analysis.sampling import (hypergeometric_interval, ratio_estimate,
                                         unseen_bound)
from heapscope.profile.sampling import probability


def brute_interval(k, K, T, seen, tail=0.025):
    """Every n for which P(X <= k) and P(X >= k) (given X >= 1 when `seen`) exceed tail."""
    held = []
    for n in range(T + 1):
        pmf = [comb(n, x) * comb(T - n, K - x) / comb(T, K) for x in range(K + 1)]
        zero = pmf[0] if seen and k > 0 else 0.0
        if zero >= 1.0:
            continue
        at_most = (sum(pmf[:k + 1]) - zero) / (1 - zero)
        at_least = sum(pmf[k:]) / (1 - zero)
        if at_most > tail + 1e-12 and at_least > tail + 1e-12:
            held.append(n)
    return held[0], held[-1]


@pytest.mark.parametrize("T", [7, 23, 41])
def test_interval_is_the_exact_hypergeometric_one(T):
    for K in range(1, T + 1, 4):
        for k in range(0, K + 1):
            for seen in (False, True):
                assert hypergeometric_interval(k, K, T, seen=seen) == brute_interval(k, K, T, seen), \
                    (k, K, T, seen)


def test_one_sample_reaches_down_to_one_allocation():
    """A size counted 340 times, seen once: the type holds 1 to 340, not 340..340."""
    assert hypergeometric_interval(1, 1, 340) == (1, 340)
    assert ratio_estimate(1, 1, 340) == 340
    # every sample on one type of a big size: the others may still hold some
    low, high = hypergeometric_interval(1400, 1400, 8_000_000)
    assert high == 8_000_000 and 7_900_000 < low < 8_000_000


def test_estimate_lies_inside_its_interval():
    rng = np.random.default_rng(5)
    for _ in range(2000):
        T = int(rng.choice([3, 50, 1000, 10 ** 5, 10 ** 8]))
        K = int(rng.integers(1, min(T, 5000) + 1))
        k = int(rng.integers(1, K + 1))
        low, high = hypergeometric_interval(k, K, T)
        assert low <= ratio_estimate(k, K, T) <= high, (k, K, T)
        assert k <= low and high <= T - (K - k)


MIXTURES = [   # allocations per type, in one (size, region) cell
    [250],                                     # one type, a few samples
    [3] * 112,                                 # many types, most never seen
    [2] * 400,                                 # nearly every sample on a type of its own
    [2000] + [20] * 20,
    [1 + int(400 * 0.8 ** t) for t in range(30)],
    [685] * 10 + [100_000],                    # 4/p each: seen but for one now and then
    [17] * 100,                                # 0.1/p each
    [120] * 10,                                # 0.7/p each
]


def test_unseen_bound_covers_the_types_no_sample_saw():
    """Bernoulli sampling as the recorder does it (1 - exp(-48/8192) per allocation):
    over 400 draws of each mixture, the unseen allocations are within the bound at
    least 95% of the time, and the seen types' intervals hold their counts as often."""
    rng = np.random.default_rng(11)
    p = probability(48, 8192)
    for counts in MIXTURES:
        counts = np.array(counts)
        T = int(counts.sum())
        held = types_held = types = 0
        for _ in range(400):
            ks = rng.binomial(counts, p)
            K = int(ks.sum())
            seen = [int(k) for k in ks if k]
            held += int(counts[ks == 0].sum()) <= unseen_bound(seen, T, 48, 8192)[1]
            for n, k in zip(counts, ks):
                if k:
                    low, high = hypergeometric_interval(int(k), K, T)
                    types_held += low <= n <= high
                    types += 1
        assert held / 400 >= 0.95, (counts[:3], held)
        assert types == 0 or types_held / types >= 0.95, (counts[:3], types_held, types)
