"""Statistics of repeated measurements: mean, median, and percentile-bootstrap
confidence intervals (as in "Memory allocation anomalies in high-performance computing
applications: A study with numerical simulations", section 4.1: resample the runs with
replacement 1000 times, read the interval off the resampled statistic).

Everything is seeded, so the same runs always give the same intervals.
"""
from dataclasses import dataclass
from typing import Callable, Sequence, Tuple

import numpy as np

RESAMPLES = 1000
CONFIDENCE = 0.95
SEED = 20261122


@dataclass(frozen=True)
class Summary:
    """One metric over the counted runs of one configuration."""
    n: int
    mean: float
    mean_ci: Tuple[float, float]
    median: float
    median_ci: Tuple[float, float]
    stdev: float
    minimum: float
    maximum: float


@dataclass(frozen=True)
class Ratio:
    """mean(values) / mean(baseline) with its bootstrap interval."""
    value: float
    ci: Tuple[float, float]


def _array(values: Sequence[float]) -> np.ndarray:
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0:
        raise ValueError("statistics need at least one value")
    return data


def median(values: Sequence[float]) -> float:
    """The middle value (mean of the two middle ones for an even count)."""
    return float(np.median(_array(values)))


def bootstrap_ci(values: Sequence[float], statistic: Callable = np.mean,
                 resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
                 seed: int = SEED) -> Tuple[float, float]:
    """Percentile bootstrap interval of `statistic` (a numpy reduction taking axis=)."""
    data = _array(values)
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    if data.size == 1:
        return float(data[0]), float(data[0])
    rng = np.random.default_rng(seed)
    samples = data[rng.integers(0, data.size, size=(resamples, data.size))]
    return _percentile_interval(statistic(samples, axis=1), confidence)


def _percentile_interval(estimates, confidence: float) -> Tuple[float, float]:
    """The central `confidence` share of bootstrap estimates (non-finite ones dropped)."""
    estimates = estimates[np.isfinite(estimates)]
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(estimates, [alpha, 1.0 - alpha])
    return float(low), float(high)


def summarize(values: Sequence[float], resamples: int = RESAMPLES,
              confidence: float = CONFIDENCE, seed: int = SEED) -> Summary:
    data = _array(values)
    return Summary(
        n=int(data.size),
        mean=float(data.mean()),
        mean_ci=bootstrap_ci(data, np.mean, resamples, confidence, seed),
        median=float(np.median(data)),
        median_ci=bootstrap_ci(data, np.median, resamples, confidence, seed + 1),
        stdev=float(data.std(ddof=1)) if data.size > 1 else 0.0,
        minimum=float(data.min()),
        maximum=float(data.max()),
    )


def ratio(values: Sequence[float], baseline: Sequence[float], resamples: int = RESAMPLES,
          confidence: float = CONFIDENCE, seed: int = SEED) -> Ratio:
    """Ratio of means, the two samples resampled independently for the interval.

    A baseline mean of zero (e.g. no major faults at all) gives NaN, not an error.
    """
    data, base = _array(values), _array(baseline)
    base_mean = base.mean()
    if base_mean == 0.0:
        nan = float("nan")
        return Ratio(nan, (nan, nan))
    value = float(data.mean() / base_mean)
    if data.size == 1 and base.size == 1:
        return Ratio(value, (value, value))
    rng = np.random.default_rng(seed)
    num = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    den = base[rng.integers(0, base.size, size=(resamples, base.size))].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return Ratio(value, _percentile_interval(num / den, confidence))


def ratio_paired(values: Sequence[float], baseline: Sequence[float], resamples: int = RESAMPLES,
                 confidence: float = CONFIDENCE, seed: int = SEED) -> Ratio:
    """Ratio of means of runs made in pairs (values[i] and baseline[i] in the same round
    of an interleaved schedule), the rounds resampled together for the interval: a load
    that moves from round to round moves both, and drops out of the ratio."""
    data, base = _array(values), _array(baseline)
    if data.size != base.size:
        raise ValueError("paired runs need as many values as baseline values")
    if base.mean() == 0.0:
        nan = float("nan")
        return Ratio(nan, (nan, nan))
    value = float(data.mean() / base.mean())
    if data.size == 1:
        return Ratio(value, (value, value))
    rng = np.random.default_rng(seed)
    rounds = rng.integers(0, data.size, size=(resamples, data.size))
    with np.errstate(divide="ignore", invalid="ignore"):
        estimates = data[rounds].mean(axis=1) / base[rounds].mean(axis=1)
    return Ratio(value, _percentile_interval(estimates, confidence))
