"""The pure functions under lifetimes, temporaries, peak and leaks, on Tracking data built
here: histogram bins and percentiles, rankings, LeakSanitizer suppression matching.
The same figures are checked end to end on recorded programs in
tests/e2e/test_lifetimes_and_temporaries.py and tests/e2e/test_peak_and_leaks.py."""
import pytest

from heapscope.analysis import histogram, suppressions
from heapscope.render import histogram_text
from heapscope.analysis.leaks import build_leaks
from heapscope.analysis.lifetimes import build_lifetimes, build_temporaries
from heapscope.analysis.peak import build_peak
from heapscope.analysis.selection import SizeSet
from heapscope.analysis.tracked import TrackedEntry, require_tracking, tracked_entries
from heapscope.errors import HeapscopeError
from heapscope.profile.model import LIFETIME_BINS, Lifetimes, Profile, TrackedStack, Tracking, lifetime_bin
from heapscope.symbolize import Frame


def hist(**bins):
    """hist(b3=5, b0=2): a LIFETIME_BINS tuple with those counts."""
    h = [0] * LIFETIME_BINS
    for name, count in bins.items():
        h[int(name[1:])] = count
    return tuple(h)


def life(allocs, frees, temps=0, time=None, between=None, peak=(0, 0), end=(0, 0)):
    return Lifetimes(allocs, frees, temps, time or hist(), between or hist(), peak[0], peak[1], end[0], end[1])


@pytest.mark.parametrize("value", [0, 1, 2, 3, 4, 7, 8, 1000, 1 << 40, (1 << 62) - 1, 1 << 62, 1 << 70])
def test_bin_range_holds_the_values_lifetime_bin_puts_there(value):
    lo, hi = histogram.bin_range(lifetime_bin(value))
    assert lo <= value and (hi is None or value <= hi)


def test_bin_ranges_tile_the_numbers():
    assert [histogram.bin_range(b) for b in range(5)] == [(0, 0), (1, 1), (2, 3), (4, 7), (8, 15)]
    assert histogram.bin_range(LIFETIME_BINS - 1) == (1 << 62, None)


def test_percentiles_are_the_bins_holding_them():
    h = hist(b0=5, b3=4, b10=1)               # 10 values: five 0s, four in 4-7, one in 512-1023
    assert histogram.percentile_bin(h, 50) == 0   # 5th value
    assert histogram.percentile_bin(h, 60) == 3   # 6th value
    assert histogram.percentile_bin(h, 90) == 3   # 9th value
    assert histogram.percentile_bin(h, 100) == 10
    assert histogram.percentile_bin(hist(), 50) is None
    s = histogram.summary_json(h)
    assert s["median"] == dict(bin=0, lo=0, hi=0) and s["p90"] == dict(bin=3, lo=4, hi=7)
    assert s["bins"] == [dict(bin=0, lo=0, hi=0, count=5), dict(bin=3, lo=4, hi=7, count=4),
                         dict(bin=10, lo=512, hi=1023, count=1)]


def test_sparkline_spans_the_non_empty_bins():
    assert histogram_text.histogram_line(hist(b2=8, b4=1)) == "█ ▁"
    assert histogram_text.histogram_line(hist()) == ""
    assert histogram_text.range_text(1024, 2047, time=True) == "1.02us-2.05us"
    assert histogram_text.range_text(4, 7, time=False) == "4-7"
    assert histogram_text.span_text(0, 3, time=False) == "0 .. 7"


# ---- rankings on merged entries ----
def F(function, file="", module="/opt/app/bin/app"):
    return Frame(function, file, 10 if file else 0, module, 0x100)


A = (F("make_a", "/src/a.c"), F("main", "/src/main.c"))
B = (F("make_b", "/src/b.c"), F("main", "/src/main.c"))
LIB = (F("lib_alloc", "", "/opt/vendor/libthing.so.1"), F("main", "/src/main.c"))


def profile_with(stacks, extra=None, peak=0):
    return Profile(path="synthetic.hsp", tracking=Tracking(stacks=stacks, extra=extra or {}, peak_bytes=peak,
                                                          peak_mono_ns=5_000_000, temporary_max_between=2))


def test_lifetimes_per_size_adds_its_types_and_carries_extra():
    e1 = TrackedEntry("(none)", 40, A, life(100, 90, 80, time=hist(b5=90), between=hist(b0=80, b2=10), end=(10, 400)))
    e2 = TrackedEntry("work", 40, B, life(300, 300, 0, time=hist(b20=300), between=hist(b9=300)))
    p = profile_with([], extra={40: (400, 3200)})
    doc = build_lifetimes([p], [e1, e2])
    (size,) = doc["sizes"]
    assert (size["size"], size["types"], size["allocs"], size["frees"], size["live_at_end"], size["temporaries"]) == \
        (40, 2, 400, 390, 10, 80)
    assert size["regions"] == ["(none)", "work"]
    assert size["extra"] == dict(blocks=400, bytes=3200, per_block=8.0)
    assert size["time"]["median"]["bin"] == 20 and size["between"]["median"]["bin"] == 9
    assert [t["allocs"] for t in size["stack_types"]] == [300, 100]     # most allocations first
    assert doc["totals"] == dict(allocs=400, frees=390, live_at_end=10, temporaries=80)


def test_temporaries_ranked_by_count_with_shares():
    entries = [TrackedEntry("(none)", 16, A, life(100, 100, 10)),
               TrackedEntry("(none)", 16, B, life(50, 50, 50)),
               TrackedEntry("(none)", 32, A, life(40, 40, 30)),
               TrackedEntry("(none)", 64, B, life(10, 10, 0))]
    doc = build_temporaries([profile_with([])], entries)
    assert doc["bound"] == dict(max_between=2, max_ns=None)
    assert doc["totals"] == dict(allocs=200, temporaries=90, share=0.45, types_with_temporaries=3)
    assert [(s["size"], s["temporaries"], s["allocs"]) for s in doc["sizes"]] == [(16, 60, 150), (32, 30, 40)]
    assert [(t["size"], t["temporaries"], t["share"]) for t in doc["stack_types"]] == \
        [(16, 50, 1.0), (32, 30, 0.75), (16, 10, 0.1)]


def test_peak_holders_by_bytes_and_unattributed_rest():
    p = profile_with([], peak=10_000)
    entries = [TrackedEntry("(none)", 100, A, life(50, 0, peak=(50, 5000))),
               TrackedEntry("(none)", 1000, B, life(3, 3, peak=(3, 3000))),
               TrackedEntry("(none)", 8, B, life(9, 9))]
    pk = build_peak(0, p, entries, entries)
    assert (pk["peak_bytes"], pk["peak_mono_ns"], pk["unattributed_bytes"]) == (10_000, 5_000_000, 2000)
    assert [(s["size"], s["bytes"], s["share"]) for s in pk["sizes"]] == [(100, 5000, 0.5), (1000, 3000, 0.3)]
    assert [(t["size"], t["blocks"]) for t in pk["stack_types"]] == [(100, 50), (1000, 3)]


# ---- LeakSanitizer suppressions ----
def test_suppression_file_syntax():
    rules = suppressions.parse("# known leaks\n\n  leak:make_a  \nleak:*vendor*\n")
    assert [(r.pattern, r.line) for r in rules] == [("make_a", 3), ("*vendor*", 4)]
    with pytest.raises(HeapscopeError, match=r"x.supp:1: expected `leak:PATTERN`, got 'race'"):
        suppressions.parse("race:foo\n", "x.supp")
    with pytest.raises(HeapscopeError, match="empty pattern"):
        suppressions.parse("leak:\n")


@pytest.mark.parametrize("pattern, name, hit", [
    ("make_a", "make_a", True), ("make", "remake_all", True),     # substring, as in LSan
    ("^make", "remake", False), ("^make", "make_a", True),
    ("a$", "make_a", True), ("a$", "make_ab", False), ("^make_a$", "make_a", True),
    ("ns::*::get", "ns::Mesh<double>::get(int)", True), ("ns::*::get", "ns::get", False),
    ("Make_a", "make_a", False), ("a.c", "abc", False),            # case-sensitive, '.' literal
])
def test_pattern_semantics(pattern, name, hit):
    assert suppressions.compile_pattern(pattern).search(name) is not None if hit else \
        suppressions.compile_pattern(pattern).search(name) is None


def test_rule_matches_function_file_or_module_of_any_frame():
    (by_func,) = suppressions.parse("leak:main")
    (by_file,) = suppressions.parse("leak:/src/b.c")
    (by_module,) = suppressions.parse("leak:libthing.so")
    assert by_func.matches(A) and by_func.matches(LIB)       # main is an outer frame of both
    assert by_file.matches(B) and not by_file.matches(A)
    assert by_module.matches(LIB) and not by_module.matches(A)


def test_leaks_reported_and_suppressed():
    entries = [TrackedEntry("(none)", 24, A, life(10, 7, end=(3, 72))),
               TrackedEntry("(none)", 100, LIB, life(5, 0, end=(5, 500))),
               TrackedEntry("(none)", 8, (), life(4, 2, end=(2, 16))),        # no stack: never suppressed
               TrackedEntry("(none)", 64, B, life(9, 9))]                     # freed: no leak
    rules = suppressions.parse("leak:libthing\nleak:make_*\nleak:unused_rule\n")
    doc = build_leaks(entries, rules, "s.supp")
    assert [(t["size"], t["bytes"]) for t in doc["leaks"]] == [(8, 16)]
    assert [(t["size"], t["suppressed_by"]) for t in doc["suppressed"]] == [(100, "libthing"), (24, "make_*")]
    assert doc["totals"] == dict(blocks=10, bytes=588, reported_types=1, reported_blocks=2, reported_bytes=16,
                                 suppressed_types=2, suppressed_blocks=8, suppressed_bytes=572)
    assert [(r["pattern"], r["types"], r["blocks"], r["bytes"]) for r in doc["suppressions"]["rules"]] == \
        [("libthing", 1, 5, 500), ("make_*", 1, 3, 72), ("unused_rule", 0, 0, 0)]
    nothing = build_leaks(entries, [], None)
    assert nothing["totals"]["reported_bytes"] == 588 and nothing["suppressed"] == []


# ---- selection and merging over profiles ----
def test_no_tracking_is_one_line_error():
    with pytest.raises(HeapscopeError, match=r"has no tracking data .*record --track -- ./app 3"):
        require_tracking([Profile(path="x.hsp", cmdline=["./app", "3"])])
    # two ranks' profiles (lmp under mpirun, `heapscope peak DIR`): said once, not "none ... has no"
    with pytest.raises(HeapscopeError) as err:
        require_tracking([Profile(path="r0.hsp", cmdline=["lmp"]), Profile(path="r1.hsp", cmdline=["lmp"])])
    assert str(err.value).startswith("none of the 2 profiles has tracking data (lifetimes, peak, leaks)")


def test_entries_merge_processes_and_select():
    def stack(size, region, allocs):
        return TrackedStack(region, size, (), life(allocs, allocs, time=hist(b1=allocs)))
    p1 = profile_with([stack(16, "(none)", 5), stack(32, "work", 7)])
    p2 = profile_with([stack(16, "(none)", 6)])
    got = tracked_entries([p1, p2], SizeSet("16"), None)
    assert [(e.size, e.life.allocs, e.life.time_hist[1]) for e in got] == [(16, 11, 11)]
    assert [e.size for e in tracked_entries([p1, p2], SizeSet(None), "work")] == [32]
    with pytest.raises(HeapscopeError, match=r"no tracked allocation of size 64 .*tracked sizes: 16, 32"):
        tracked_entries([p1, p2], SizeSet("64"), None)
    with pytest.raises(HeapscopeError, match="no region 'nope'"):
        tracked_entries([p1, p2], SizeSet(None), "nope")
