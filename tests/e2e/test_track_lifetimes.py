"""Tracking mode (record --track) on a program with known lifetimes
(tests/programs/trk_lifetimes.c): allocations, frees, temporaries, the lifetime
histograms, who holds the heap peak, leaks at exit, extra bytes per size."""
import pytest

from heapscope.profile import read_profile
from heapscope.profile.model import LIFETIME_BINS, lifetime_bin
from heapscope.symbolize.symbolizer import Symbolizer


def record(heapscope, build, out, *options, mode=None, env=None):
    program = build("trk_lifetimes.c", "-pthread")
    heapscope("record", "-o", out, "--track", "--sample-bytes", "off", *options, "--", program,
              *([mode] if mode else []), env=env)
    files = sorted(out.glob("heapscope.*.hsp"))
    return [read_profile(f) for f in files]


def rows(profile):
    """size -> the one tracked row of that size (region (none))."""
    out = {}
    for s in profile.tracking.stacks:
        assert s.region == "(none)"
        assert s.size not in out, f"two rows of size {s.size}"
        out[s.size] = s
    return out


def hist(**bins):
    h = [0] * LIFETIME_BINS
    for b, n in bins.items():
        h[int(b[1:])] = n
    return tuple(h)


@pytest.fixture(scope="module")
def default_run(heapscope, build, tmp_path_factory):
    [p] = record(heapscope, build, tmp_path_factory.mktemp("trk-default"), "--sizes", "200")
    return p


def test_allocations_frees_and_temporaries(default_run):
    t = default_run.tracking
    assert t.source == "track" and t.untracked == 0
    assert t.temporary_max_between == 0 and t.temporary_max_ns == 0
    r = rows(default_run)
    # freed at once: temporaries with N = 0, nothing in between
    assert (r[48].life.allocs, r[48].life.frees, r[48].life.temporaries) == (100, 100, 100)
    assert r[48].life.between_hist == hist(b0=100)
    # 50 allocations of 8 B between each 64-B block's birth and death
    assert (r[64].life.allocs, r[64].life.frees, r[64].life.temporaries) == (10, 10, 0)
    assert r[64].life.between_hist == hist(**{f"b{lifetime_bin(50)}": 10})
    assert lifetime_bin(50) == 6
    # 1, 2 and 3 allocations in between, five blocks each
    assert r[72].life.between_hist == hist(b1=5, b2=10)
    assert r[72].life.temporaries == 0
    # realloc 10 -> 130 -> 1300: each old block dies as the new one is born
    for size in (10, 130, 1300):
        assert (r[size].life.allocs, r[size].life.frees, r[size].life.temporaries) == (1, 1, 1)
    assert (r[21].life.allocs, r[21].life.temporaries) == (1, 1)   # calloc(7, 3)
    # a block freed by another thread: counted once, its lifetime measured
    assert (r[56].life.allocs, r[56].life.frees) == (4, 4)
    assert sum(r[56].life.time_hist) == 4
    for s in r.values():
        assert sum(s.life.time_hist) == sum(s.life.between_hist) == s.life.frees


def test_counts_agree_with_the_size_counts(default_run):
    """Every allocation counted in SIZE_COUNTS is tracked (no table overflow here)."""
    counted = {size: n for (region, size), n in default_run.size_counts.items()}
    tracked = {s.size: s.life.allocs for s in default_run.tracking.stacks}
    assert tracked == counted


def test_peak_and_who_held_it(default_run):
    t = default_run.tracking
    r = rows(default_run)
    assert t.peak_bytes == 8000                      # 2 x 4000 B, nothing else live
    assert (r[4000].life.live_at_peak, r[4000].life.live_at_peak_bytes) == (2, 8000)
    assert r[1000].life.live_at_peak == 0
    assert sum(s.life.live_at_peak_bytes for s in t.stacks) == t.peak_bytes
    assert 0 < t.peak_mono_ns < default_run.snapshot_mono_ns


def test_leaks_at_exit_in_their_function(default_run):
    t = default_run.tracking
    r = rows(default_run)
    leak = r[200]
    assert (leak.life.allocs, leak.life.frees) == (3, 0)
    assert (leak.life.live_at_end, leak.life.live_at_end_bytes) == (3, 600)
    assert leak.frames, "200 B was selected with --sizes: its rows carry the stack"
    frames = Symbolizer().resolve(default_run, leak.frames)
    assert frames[leak.frames[0]][0].function == "leak_three"
    # other sizes: one row per size, without frames
    assert all(s.frames == () for s in t.stacks if s.size != 200)
    assert t.end_bytes == sum(s.life.live_at_end_bytes for s in t.stacks)
    for size in (48, 64, 72, 1000, 4000, 10, 130, 1300, 21, 20, 56):
        assert r[size].life.live_at_end == 0


def test_extra_bytes_of_glibc(default_run):
    """malloc_usable_size on glibc 2.36 (x86-64): 20 -> 24, 48 -> 56, 200 -> 200,
    4000 -> 4008, 8 -> 24 (the minimum chunk)."""
    extra = default_run.tracking.extra
    assert extra[20] == (4, 16)
    assert extra[48] == (100, 800)
    assert extra[200] == (3, 0)
    assert extra[4000] == (2, 16)
    assert extra[8] == (500, 8000)


def test_temporary_between_two(heapscope, build, tmp_path):
    [p] = record(heapscope, build, tmp_path, "--temporary-between", "2")
    assert p.tracking.temporary_max_between == 2
    r = rows(p)
    assert r[72].life.temporaries == 10      # 1 or 2 allocations in between; not the 3s
    assert r[48].life.temporaries == 100
    assert r[64].life.temporaries == 0


def test_time_bound(heapscope, build, tmp_path):
    """One 40-B block lives 300 ms, four die at once: with a 100 ms bound only those
    four are temporaries (all five have nothing in between)."""
    [p] = record(heapscope, build, tmp_path, "--temporary-time", "100ms", mode="slow")
    assert p.tracking.temporary_max_ns == 100_000_000
    r = rows(p)[40].life
    assert (r.allocs, r.frees, r.temporaries) == (5, 5, 4)
    assert sum(r.time_hist[lifetime_bin(300_000_000):]) == 1
    assert r.between_hist == hist(b0=5)


def test_table_bound_counts_untracked(heapscope, build, tmp_path):
    """30 blocks live together, the table holds 10: 20 untracked, none lost silently."""
    [p] = record(heapscope, build, tmp_path, "--track-max-blocks", "10", mode="many")
    t = p.tracking
    assert (t.untracked, t.untracked_bytes, t.peak_is_lower_bound) == (20, 20 * 24, True)
    r = rows(p)[24].life
    assert (r.allocs, r.frees, r.temporaries) == (10, 10, 0)
    assert p.size_counts[("(none)", 24)] == 30
    assert t.peak_bytes == 240


def test_forked_child_starts_from_zero(heapscope, build, tmp_path):
    profiles = record(heapscope, build, tmp_path, mode="fork")
    [child] = [p for p in profiles if any(p.ppid == q.pid for q in profiles)]
    [parent] = [p for p in profiles if p is not child]
    c = rows(child)
    assert set(c) == {88}
    assert (c[88].life.allocs, c[88].life.live_at_end, c[88].life.live_at_end_bytes) == (4, 4, 352)
    assert child.tracking.end_bytes == 352
    pr = rows(parent)
    assert 88 not in pr
    assert (pr[96].life.allocs, pr[96].life.frees, pr[96].life.live_at_end) == (4, 4, 0)


@pytest.mark.parametrize("args,message", [
    (["--temporary-between", "3"], "--temporary-between sets how blocks are tracked: give --track or --trace too"),
    (["--trace", "--track-max-blocks", "9"], "--track-max-blocks sets how blocks are tracked: give --track too"),
    (["--track", "--temporary-between", "-1"], "bad --temporary-between '-1'"),
    (["--track", "--temporary-time", "10"], "bad --temporary-time '10'"),
    (["--track", "--temporary-time", "2 weeks"], "bad --temporary-time '2 weeks'"),
    (["--track", "--track-max-blocks", "0"], "bad --track-max-blocks '0'"),
])
def test_bad_options_one_line(heapscope, tmp_path, args, message):
    res = heapscope("record", "-o", tmp_path / "out", *args, "--", "true", check=False)
    assert res.returncode != 0
    assert res.stderr.startswith("heapscope: error: " + message)
    assert len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
