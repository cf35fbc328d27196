"""The estimates of `heapscope access` (analysis/access.py) against simulated recordings:
a cell of T blocks of one size whose touched shares are known, each block sampled with the
recorder's probability 1 - exp(-size/N), over mixtures of shares (blocks wholly used or
not, half-used pages, a uniform spread, every block 6% used) and of two call paths in one
cell. The touched bytes' interval treats the sum of the sampled shares as a count of blocks
wholly touched (Hoeffding's convex-order bound makes that the widest case): it must hold
the true bytes in at least 95% of recordings (94% allowed for the simulation's own noise
at 600 recordings), and hold its estimate always; so must the never-touched count's."""
import math
import random
import zlib

import pytest

from heapscope.analysis.access import bytes_estimate, count_estimate

RECORDINGS = 600

MIXTURES = {
    "30% wholly used": lambda rng: 1.0 if rng.random() < 0.3 else 0.0,
    "2% wholly used": lambda rng: 1.0 if rng.random() < 0.02 else 0.0,
    "none, half, all": lambda rng: rng.choice([0.0, 0.5, 1.0]),
    "uniform": lambda rng: rng.random(),
    "every block 6%": lambda rng: 0.0625,
}
CELLS = [(200, 8192, 65536), (1500, 8192, 524288), (1000, 4096, 65536), (60, 1 << 20, 4 << 20)]


def covered(rng, T, size, mean, shares, path):
    """One recording: (touched interval holds, never-touched interval holds), for the blocks
    of `path` (a list of booleans, the blocks on the path) in a cell of T; None if no sample."""
    p = -math.expm1(-size / mean)
    picked = [i for i in range(T) if rng.random() < p]
    if not picked:
        return None
    mine = [i for i in picked if path[i]]
    share = sum(shares[i] for i in mine)
    never = sum(1 for i in mine if shares[i] == 0)
    touched = bytes_estimate(share, len(picked), T, size, len(mine))
    nt = count_estimate(never, len(picked), T, never == len(mine) and never > 0)
    truth = sum(shares[i] for i in range(T) if path[i]) * size
    nt_truth = sum(1 for i in range(T) if path[i] and shares[i] == 0)
    assert touched["low"] <= touched["value"] <= touched["high"]
    assert nt["low"] <= nt["value"] <= nt["high"]
    return touched["low"] <= truth <= touched["high"], nt["low"] <= nt_truth <= nt["high"]


@pytest.mark.parametrize("mixture", MIXTURES)
@pytest.mark.parametrize("cell", CELLS, ids=lambda c: f"T{c[0]}-size{c[1]}-mean{c[2]}")
@pytest.mark.parametrize("paths", ["one path", "two paths"])
def test_intervals_hold_the_truth(mixture, cell, paths):
    T, size, mean = cell
    rng = random.Random(zlib.crc32(repr((mixture, cell, paths)).encode()))
    held = [0, 0]
    n = 0
    for _ in range(RECORDINGS):
        shares = [MIXTURES[mixture](rng) for _ in range(T)]
        path = [True] * T if paths == "one path" else [rng.random() < 0.4 for _ in range(T)]
        result = covered(rng, T, size, mean, shares, path)
        if result is None:
            continue
        n += 1
        held[0] += result[0]
        held[1] += result[1]
    assert n > RECORDINGS // 2
    assert held[0] / n >= 0.94, f"touched bytes held in {held[0]}/{n}"
    assert held[1] / n >= 0.94, f"never-touched blocks held in {held[1]}/{n}"


def test_every_block_measured_is_exact():
    """K = T (a size far above the mean): every figure is the sampled one."""
    assert bytes_estimate(5.3, 80, 80, 1 << 20, 80) == dict(value=round(5.3 * (1 << 20)),
                                                            low=round(5.3 * (1 << 20)),
                                                            high=round(5.3 * (1 << 20)))
    assert count_estimate(3, 80, 80, False) == dict(value=3, low=3, high=3)
    assert count_estimate(0, 0, 10, False) == dict(value=None, low=None, high=None)
