"""The laws of per-rank memory against the rank count (analysis/scaling_fit.py): Student's
t quantiles against their tables, each law recovered exactly from its own figures, the
held-out choice preferring the simpler law within the noise, rivals that fit as well and
predict differently, too few rank counts, and where a limit is crossed."""
import math

import numpy as np
import pytest

from heapscope.analysis.scaling_fit import (LAWS, choose, first_above, fit, held_out_error,
                                            student_t_quantile)

LAW = {law.name: law for law in LAWS}
P = [2, 4, 8, 16]


@pytest.mark.parametrize("dof, table", [(1, 12.7062), (2, 4.3027), (3, 3.1824), (4, 2.7764),
                                        (5, 2.5706), (7, 2.3646), (10, 2.2281), (30, 2.0423),
                                        (120, 1.9799)])
def test_t_quantiles_are_the_tables(dof, table):
    assert student_t_quantile(0.975, dof) == pytest.approx(table, abs=5e-5)


def _exact(name, p, a, *coef):
    law = LAW[name]
    X = law.design(p)
    return X @ np.array((a,) + coef, dtype=float)


@pytest.mark.parametrize("name, coef", [
    ("constant", ()), ("1/p", (24_000_000,)), ("log p", (1_000_000,)), ("p", (65_536,)),
    ("p log p", (65_536,)), ("p^2", (16_384,)), ("1/p + p", (24_000_000, 131_072)),
    ("1/p + log p", (16_000_000, 200_000))])
def test_each_law_is_chosen_from_its_own_figures(name, coef):
    p = [1, 2, 4, 8, 16] if len(coef) == 2 else P
    y = _exact(name, p, 3_000_000, *coef)
    c = choose(p, y, [32, 64])
    assert c.status == "chosen"
    assert c.chosen.law.name == name
    assert c.chosen.coef[0] == pytest.approx(3_000_000, abs=1)
    assert list(c.chosen.coef[1:]) == pytest.approx(list(coef), rel=1e-9)
    truth = _exact(name, [32, 64], 3_000_000, *coef)
    assert [c.chosen.predict(t) for t in (32, 64)] == pytest.approx(list(truth), rel=1e-9)
    assert c.rivals == []


def test_noise_within_the_floor_is_the_constant_law():
    # 0.2% wobble: every growth law's held-out error is within the 1% noise floor
    y = [10_000_000, 10_020_000, 9_990_000, 10_010_000]
    c = choose(P, y, [64])
    assert c.chosen.law.name == "constant"
    lo, hi = c.chosen.interval(64)
    assert lo < np.mean(y) < hi
    # the interval is least squares' for a new run: mean +- t(3) s sqrt(1 + 1/4)
    s = np.std(y, ddof=1)
    assert hi - np.mean(y) == pytest.approx(student_t_quantile(0.975, 3) * s * math.sqrt(1.25))


def test_growth_with_noise_is_told_from_a_constant():
    rng = np.random.default_rng(7)
    y = _exact("p", P, 5_000_000, 1_000_000) + rng.normal(0, 20_000, len(P))
    c = choose(P, y, [64])
    assert c.chosen.law.name == "p"
    lo, hi = c.chosen.interval(64)
    assert lo < 5_000_000 + 64 * 1_000_000 < hi


def test_rivals_fit_as_well_and_predict_differently():
    # log p and p through three close rank counts: both held-out errors within the floor,
    # far apart at 1024 ranks
    p = [8, 9, 10]
    y = _exact("log p", p, 1_000_000, 100_000)
    c = choose(p, y, [1024])
    assert c.status == "chosen"
    names = {c.chosen.law.name} | {r.law.name for r in c.rivals}
    assert {"log p", "p"} <= names
    assert c.chosen.law.coefficients == 2


def test_two_rank_counts_that_differ_choose_no_law():
    c = choose([2, 4], [10_000_000, 7_000_000], [8])
    assert c.status == "too-few-points"
    # the laws through both points, each predicting its own way
    through = {f.law.name: f.predict(8) for f in c.exact}
    assert through["1/p"] == pytest.approx(5_500_000)
    assert "p" not in through            # falling figures: no growth law goes through them
    assert "1/p + p" in c.unchecked


def test_two_equal_rank_counts_are_a_constant():
    c = choose([2, 4], [7_000_000, 7_000_000], [8])
    assert (c.status, c.chosen.law.name) == ("chosen", "constant")
    assert c.chosen.predict(8) == pytest.approx(7_000_000)


def test_a_term_with_a_negative_coefficient_is_not_its_law():
    y = _exact("1/p", P, 1_000_000, 8_000_000)       # falls with p: no growth law fits
    assert fit(LAW["p"], P, y) is None
    assert fit(LAW["1/p"], P, y) is not None


def test_held_out_error_leaves_each_rank_count_out():
    y = [1.0, 2.0, 3.0, 10.0]
    # the constant law predicts each point by the mean of the others
    misses = [np.mean([v for j, v in enumerate(y) if j != i]) - y[i] for i in range(4)]
    assert held_out_error(LAW["constant"], np.array(P, float), np.array(y)) == \
        pytest.approx(math.sqrt(np.mean(np.square(misses))))


def test_first_above_finds_the_crossing():
    f = fit(LAW["p"], P, _exact("p", P, 1_000_000, 65_536))
    limit = 1_000_000 + 65_536 * 1000.5
    n = first_above(f.predict, limit, 16)
    assert n == 1001 and f.predict(n) > limit >= f.predict(n - 1)
    assert first_above(lambda p: 5.0, 10.0, 16) is None
    assert first_above(lambda p: 50.0, 10.0, 16) == 16


def test_repeated_runs_are_left_out_together():
    """Two runs at each rank count: one left out is predicted without its twin, and two
    rank counts are still too few to check a growth law."""
    p = [2, 2, 4, 4, 8, 8]
    y = [3_000_000 + 65_536 * q + d for q, d in zip(p, (0, 4096, 0, 4096, 0, 4096))]
    c = choose(p, y, [64])
    assert c.chosen.law.name == "p" and c.chosen.dof == 4
    f = fit(LAW["p"], [4, 4, 8, 8], y[2:])
    misses = [f.predict(2) - v for v in y[:2]]
    assert held_out_error(LAW["p"], np.array(p, float), np.array(y, float)) >= \
        math.sqrt(np.mean(np.square(misses))) / math.sqrt(3)
    two = choose([2, 2, 4, 4], [1_000_000, 1_000_000, 2_000_000, 2_000_000], [8])
    assert two.status == "too-few-points" and "p" in {f.law.name for f in two.exact}
