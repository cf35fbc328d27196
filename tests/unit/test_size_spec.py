"""One size grammar for record (--sizes, passed on as HEAPSCOPE_STACK_SIZES) and the
reports (--size): what one accepts the other does too, and it is what the recorder
parses (digits, ranges lo-hi, commas; blanks around the commas are dropped)."""
import pytest

from heapscope.analysis.selection import SizeSet
from heapscope.errors import HeapscopeError


@pytest.mark.parametrize("spec,normalized,exact,ranges", [
    ("12", "12", {12}, []),
    (" 12 , 24,100-200 ", "12,24,100-200", {12, 24}, [(100, 200)]),
    ("all", "all", set(), []),
    ("0-0", "0-0", set(), [(0, 0)]),
])
def test_accepted_specs(spec, normalized, exact, ranges):
    s = SizeSet(spec)
    assert (s.normalized, s.exact, s.ranges) == (normalized, exact, ranges)
    assert SizeSet(spec, "--sizes").normalized == normalized


# each once slipped through one of the two parsers: the recorder would refuse them at
# start-up ("1 2" record read as 12; "+5" and "1_000" the reports read as 5 and 1000)
@pytest.mark.parametrize("spec", ["12,", "+5", "1_000", "1 2", "-5", "5-", "12,x", "18446744073709551616"])
def test_rejected_specs(spec):
    with pytest.raises(HeapscopeError, match=r"^bad size spec .*expected sizes and ranges"):
        SizeSet(spec)
    with pytest.raises(HeapscopeError, match=r"^bad --sizes "):
        SizeSet(spec, "--sizes")


def test_a_range_upside_down_says_so():
    with pytest.raises(HeapscopeError, match=r"^bad --sizes range '20-10': 20 > 10$"):
        SizeSet("20-10", "--sizes")


def test_membership():
    s = SizeSet("12,100-200")
    assert 12 in s and 100 in s and 200 in s and 150 in s
    assert 13 not in s and 99 not in s and 201 not in s
    assert 10 ** 9 in SizeSet(None) and 10 ** 9 in SizeSet("all")
