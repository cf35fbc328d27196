"""diff --fail-if-more P: a rise of more than P percent is a regression, a rise of exactly
P is not, and an unchanged program passes the strictest gate (P = 0)."""
from heapscope.analysis.diff import Change, regression


def test_unchanged_passes_fail_if_more_0():
    assert regression(Change(360, 360, 11120, 11120), 0) is None
    assert regression(Change(360, 360, 11120, 11120), 0, "bytes") is None


def test_a_rise_of_exactly_the_limit_is_allowed():
    total = Change(200, 220, 1000, 1250)   # +10% allocations, +25% bytes
    assert regression(total, 10) is None
    assert regression(total, 25, "bytes") is None
    assert regression(total, 9.99) == \
        "allocations rose by 10.00% (200 -> 220), more than the 9.99% allowed"
    assert regression(total, 24.9, "bytes") == \
        "bytes rose by 25.00% (1,000 -> 1,250), more than the 24.9% allowed"
