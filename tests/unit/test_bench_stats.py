"""heapscope.bench.stats on data whose answers are known."""
import math

import numpy as np
import pytest

from heapscope.bench import stats


def test_median_odd_even_and_unsorted():
    assert stats.median([3.0, 1.0, 2.0]) == 2.0
    assert stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert stats.median([7.0]) == 7.0
    with pytest.raises(ValueError):
        stats.median([])


def test_summary_of_known_sample():
    s = stats.summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert s.n == 5
    assert s.mean == 3.0
    assert s.median == 3.0
    assert s.stdev == pytest.approx(math.sqrt(2.5))
    assert (s.minimum, s.maximum) == (1.0, 5.0)
    # a bootstrap mean lies between the smallest and largest value, and the
    # interval holds the sample mean
    assert 1.0 <= s.mean_ci[0] < 3.0 < s.mean_ci[1] <= 5.0
    assert 1.0 <= s.median_ci[0] <= 3.0 <= s.median_ci[1] <= 5.0


def test_bootstrap_is_seeded_and_degenerate_cases():
    data = list(np.random.default_rng(5).normal(0.33, 0.03, 20))
    assert stats.bootstrap_ci(data) == stats.bootstrap_ci(data)
    assert stats.bootstrap_ci(data, seed=1) != stats.bootstrap_ci(data, seed=2)
    assert stats.bootstrap_ci([2.5]) == (2.5, 2.5)
    assert stats.bootstrap_ci([4.0] * 8) == (4.0, 4.0)
    with pytest.raises(ValueError):
        stats.bootstrap_ci(data, confidence=1.5)


def _coverage(draw, true_value, statistic, trials=400, n=30):
    rng = np.random.default_rng(7)
    hits = 0
    for t in range(trials):
        sample = draw(rng, n)
        low, high = stats.bootstrap_ci(sample, statistic, seed=t)
        hits += low <= true_value <= high
    return hits / trials


def test_mean_interval_covers_true_mean_at_about_95_percent():
    # normal(10, 2): the percentile bootstrap with n = 30 covers ~94%
    rate = _coverage(lambda rng, n: rng.normal(10.0, 2.0, n), 10.0, np.mean)
    assert 0.90 <= rate <= 0.98, rate


def test_mean_interval_on_a_skewed_distribution():
    # exponential with mean 1: skewed, coverage a little lower but near 95%
    rate = _coverage(lambda rng, n: rng.exponential(1.0, n), 1.0, np.mean)
    assert 0.87 <= rate <= 0.98, rate


def test_median_interval_covers_true_median():
    # uniform(0, 1): true median 0.5
    rate = _coverage(lambda rng, n: rng.uniform(0.0, 1.0, n), 0.5, np.median)
    assert 0.90 <= rate <= 0.99, rate


def test_narrower_interval_for_larger_samples():
    rng = np.random.default_rng(3)
    small = stats.bootstrap_ci(rng.normal(0, 1, 10))
    large = stats.bootstrap_ci(rng.normal(0, 1, 1000))
    assert (large[1] - large[0]) < (small[1] - small[0]) / 4


def test_ratio_of_exact_multiples():
    base = [1.0, 2.0, 3.0, 4.0]
    r = stats.ratio([2.0 * v for v in base], base)
    assert r.value == pytest.approx(2.0)
    assert r.ci[0] < 2.0 < r.ci[1]
    same = stats.ratio([5.0, 5.0], [5.0, 5.0])
    assert same.value == 1.0 and same.ci == (1.0, 1.0)


def test_ratio_with_zero_baseline_is_nan_not_an_error():
    r = stats.ratio([1.0, 2.0], [0.0, 0.0])
    assert math.isnan(r.value)


def test_ratio_interval_covers_true_ratio():
    rng = np.random.default_rng(11)
    hits, trials = 0, 300
    for t in range(trials):
        a = rng.normal(6.0, 0.6, 20)
        b = rng.normal(3.0, 0.3, 20)
        r = stats.ratio(a, b, seed=t)
        hits += r.ci[0] <= 2.0 <= r.ci[1]
    assert 0.88 <= hits / trials <= 0.99, hits / trials


def test_paired_ratio_cancels_a_load_shared_by_each_round():
    # each round's load scales both runs alike: the paired interval is the ratio itself,
    # the unpaired one is wide
    load = np.random.default_rng(7).uniform(1.0, 1.6, 30)
    base = list(0.30 * load)
    data = list(0.315 * load)
    paired = stats.ratio_paired(data, base)
    assert paired.value == pytest.approx(1.05)
    assert paired.ci == pytest.approx((1.05, 1.05))
    unpaired = stats.ratio(data, base)
    assert unpaired.ci[1] - unpaired.ci[0] > 0.1
    # noise of its own in each run still shows
    noisy = [d * f for d, f in zip(data, np.random.default_rng(8).normal(1.0, 0.03, 30))]
    r = stats.ratio_paired(noisy, base)
    assert r.ci[0] < r.value < r.ci[1]
    assert 0.01 < r.ci[1] - r.ci[0] < 0.05


def test_paired_ratio_needs_pairs():
    with pytest.raises(ValueError):
        stats.ratio_paired([1.0, 2.0], [1.0])
    assert math.isnan(stats.ratio_paired([1.0], [0.0]).value)
    assert stats.ratio_paired([3.0], [2.0]).ci == (1.5, 1.5)
