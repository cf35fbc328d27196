"""hsmalloc's hot-size classes (tests/allocator/hot_sizes.c): detected at run time, named
by HSMALLOC_HOT_SIZES (a list or @file), chosen from a recorded profile by
`heapscope run --hot-sizes`, retired in a later phase with their blocks still valid;
the statistics' hot rows against the counts the program knows; every kind of bad
HSMALLOC_HOT_SIZES is one warning line and the default behaviour."""
import os
import subprocess

import pytest

from heapscope.analysis.hot_sizes import hot_sizes, variable_value
from heapscope.profile import load_profiles


@pytest.fixture(scope="module")
def hot_program(build):
    return build("../allocator/hot_sizes.c", "-O1", "-pthread", "-ldl", name="hot_sizes")


def run_program(exe, native, *args, env=None):
    full = {k: v for k, v in os.environ.items() if not k.startswith("HSMALLOC_")}
    full.update(LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"), **(env or {}))
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=full,
                          timeout=300)


def assert_ok(res, mode, min_checks):
    assert res.returncode == 0, f"exit {res.returncode}: {res.stderr[-2000:]}"
    fields = res.stdout.split()
    assert fields[:2] == ["ok", mode], res.stdout
    assert int(fields[2].split("=")[1]) >= min_checks


def test_detected_hot_sizes_get_exact_classes_and_exact_statistics(hot_program, native):
    # 36000 usable sizes, then per class: allocs, frees, requested, allocated, live,
    # slow <= allocs, kept pages, not seeded (8 checks x 3), and no class for 600 bytes
    assert_ok(run_program(hot_program, native, "detect"), "detect", 36000 + 8 * 3 + 1)


def test_named_hot_sizes_are_exact_from_the_first_allocation(hot_program, native):
    res = run_program(hot_program, native, "seeded", "528,1040,2064",
                      env={"HSMALLOC_HOT_SIZES": "520,1030,2050", "HSMALLOC_HOT_DETECT": "0"})
    assert_ok(res, "seeded", 4500 + 3 * 4)
    assert res.stderr == ""


def test_named_hot_sizes_from_a_file(hot_program, native, tmp_path):
    listing = tmp_path / "hot.txt"
    listing.write_text("1030\n2050 520\n")
    res = run_program(hot_program, native, "seeded", "528,1040,2064",
                      env={"HSMALLOC_HOT_SIZES": f"@{listing}", "HSMALLOC_HOT_DETECT": "0"})
    assert_ok(res, "seeded", 4500 + 3 * 4)


def test_without_hot_sizes_the_fixed_classes_serve(hot_program, native):
    res = run_program(hot_program, native, "seeded", "none", env={"HSMALLOC_HOT_DETECT": "0"})
    assert_ok(res, "seeded", 4500)


def test_a_small_hot_class_takes_only_its_own_8_byte_step(hot_program, native):
    """Up to 128 bytes the packed classes are exact: a hot 48 serves 41-48, and 33-40
    stay in the class of 40 (100 rounds of 16 sizes: usable sizes, then the row)."""
    res = run_program(hot_program, native, "small",
                      env={"HSMALLOC_HOT_SIZES": "48", "HSMALLOC_HOT_DETECT": "0",
                           "HSMALLOC_PACKED": "1"})
    assert_ok(res, "small", 1600 + 2)


def test_no_hot_class_where_the_fixed_class_fits_exactly(hot_program, native):
    """With malloc on the packed classes (HSMALLOC_PACKED=1) every 8-byte step up to 128
    is a fixed class: hot 20, 36 and 100 bytes are served by the fixed 24, 40 and 104
    (usable sizes checked), and no hot class is made for them, which would only hold a
    second set of pages beside the fixed class's (before, 24, 40 and 104 were promoted)."""
    res = run_program(hot_program, native, "packed", env={"HSMALLOC_PACKED": "1"})
    assert_ok(res, "packed", 4000 + 15)


@pytest.mark.parametrize("packed, served", [("1", "24 17"), ("0", "32 17"), ("new", "32 17")])
def test_a_named_packed_size_gets_the_class_that_serves_it(hot_program, native, packed, served):
    """HSMALLOC_HOT_SIZES=20 names the class of 24 (17-24 bytes) with malloc on the packed
    classes, of 32 (17-32) without (by default malloc is 16-aligned); 100 rounds of every
    size 9-40, counted in the row exactly."""
    res = run_program(hot_program, native, "named", *served.split(),
                      env={"HSMALLOC_HOT_SIZES": "20", "HSMALLOC_HOT_DETECT": "0",
                           "HSMALLOC_PACKED": packed})
    assert_ok(res, "named", 32 * 100 + 2)


def test_hot_sizes_above_4_kib_get_exact_classes(hot_program, native):
    """Arrays of 2^k + 2 doubles, 4112, 16400, 65552 and 131088 bytes (above 128 KiB: a
    large block of 3 slices otherwise): each takes at least 1/8 of the window and gets a
    class of exactly its size (the fixed classes round up by 12%: 4608, 18432, 73728);
    400 rounds, usable sizes checked, and the rows count exactly the allocations after
    the window. Before, hot sizes stopped at 4096 bytes."""
    res = run_program(hot_program, native, "big")
    assert_ok(res, "big", 3200 + 4 * 6)


def test_named_hot_sizes_above_4_kib_from_the_first_allocation(hot_program, native):
    res = run_program(hot_program, native, "big", "named",
                      env={"HSMALLOC_HOT_SIZES": "4112,16400,65552,131088",
                           "HSMALLOC_HOT_DETECT": "0"})
    assert_ok(res, "big", 3200 + 4 * 6)
    assert res.stderr == ""


def test_a_hot_class_above_4_kib_caches_a_batch_of_blocks(hot_program, native):
    """200 rounds of 16 blocks of a hot 16,400 bytes, allocated then freed: the thread's
    cache of the class holds the 16 (HSM_CACHE_HOT_BIG_BLOCKS), so only the first
    round's 16 allocations (each a block carved fresh) leave the fast path. With 64 KiB
    of blocks (4) as the bound, every round overflowed the cache and refilled it: 812."""
    res = run_program(hot_program, native, "bigcache",
                      env={"HSMALLOC_HOT_SIZES": "16400", "HSMALLOC_HOT_DETECT": "0"})
    assert res.returncode == 0, res.stdout + res.stderr
    slow, ok = res.stdout.splitlines()
    assert ok.split()[:2] == ["ok", "bigcache"]
    assert slow == "slow 16"


def test_blocks_stay_valid_across_class_retirement(hot_program, native):
    res = run_program(hot_program, native, "retire", env={"HSMALLOC_HOT_RESAMPLE_MS": "0"})
    assert_ok(res, "retire", 6000 * 530)  # per block: 528 bytes, usable size, owned


@pytest.mark.parametrize("value, why", [
    ("abc", "'abc' is not a size in bytes"),
    ("528,,x1", "'x1' is not a size in bytes"),
    ("0", "'0' is outside 1..262144 bytes"),
    ("-528", "'-528' is not a size in bytes"),
    ("99999999999999999999999", "is outside 1..262144 bytes"),
    ("262145", "'262145' is outside 1..262144 bytes"),
    ("16,32,48,64,80,96,112,128,144", "'144' is one size too many (at most 8)"),
    (",", "names no size"),
    ("@/nonexistent/hot-sizes", "the file cannot be opened"),
    ("@/", "the file cannot be read"),
])
def test_a_bad_variable_is_one_warning_and_the_default(hot_program, native, value, why):
    res = run_program(hot_program, native, "seeded", "none",
                      env={"HSMALLOC_HOT_SIZES": value, "HSMALLOC_HOT_DETECT": "0"})
    assert_ok(res, "seeded", 4500)  # the fixed classes: nothing was named
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"hsmalloc: HSMALLOC_HOT_SIZES={value[:200]}: ")
    assert why in lines[0] and lines[0].endswith("; using no named hot sizes")


@pytest.fixture(scope="module")
def pattern_profile(hot_program, heapscope, tmp_path_factory):
    out = tmp_path_factory.mktemp("hot-profile")
    heapscope("record", "-o", out, "--", hot_program, "pattern")
    return out


def test_the_hint_groups_sizes_as_hsmalloc_rounds_named_sizes():
    """A named size rounds up to 16 by default (malloc is 16-aligned): 20, 24 and 28 are
    one class of 32; with malloc on the packed classes, 8-byte steps up to 128."""
    from types import SimpleNamespace
    from heapscope.analysis.hot_sizes import class_of
    counts = {(0, 20): 300, (0, 24): 100, (0, 28): 250, (0, 129): 200, (0, 144): 150}
    hot = hot_sizes([SimpleNamespace(size_counts=counts)])
    assert [(h.size, h.count, h.sizes) for h in hot] == [(32, 650, (20, 28, 24)),
                                                           (144, 350, (129, 144))]
    assert variable_value(hot) == "32,144"
    assert [class_of(n, packed=True) for n in (9, 20, 24, 28, 129)] == [16, 24, 24, 32, 144]


def test_the_hint_names_sizes_up_to_256_kib():
    """Arrays of 2^k + 2 doubles above 4 KiB are hot sizes too (hsmalloc's classes reach
    256 KiB); 262160 bytes (2^15 + 2 doubles) is beyond them. Before, the hint stopped at
    4096."""
    from types import SimpleNamespace
    counts = {(0, 4112): 300, (0, 65552): 200, (0, 262160): 500, (0, 100): 100}
    hot = hot_sizes([SimpleNamespace(size_counts=counts)])
    assert [(h.size, h.count) for h in hot] == [(4112, 300), (65552, 200), (112, 100)]
    assert variable_value(hot) == "4112,65552,112"


def test_profile_names_the_hot_sizes_with_exact_counts(pattern_profile):
    # 500 rounds of 4 x 520, 2 x 1030, 2 x 2050, 1 x 600 bytes
    hot = hot_sizes(load_profiles([pattern_profile]))
    assert [(h.size, h.count, h.sizes) for h in hot] == [
        (528, 2000, (520,)), (1040, 1000, (1030,)), (2064, 1000, (2050,)), (608, 500, (600,))]
    assert variable_value(hot) == "528,1040,2064,608"
    assert hot_sizes(load_profiles([pattern_profile]), min_share=0.3) == hot[:1]  # 44%, 22%, 22%, 11%


def test_heapscope_run_takes_hot_sizes_from_a_profile(pattern_profile, hot_program, heapscope,
                                                      native):
    res = heapscope("run", "--allocator", "hsmalloc", "--hot-sizes", pattern_profile, "--",
                    hot_program, "seeded", "528,1040,2064,608",
                    env={"HSMALLOC_HOT_DETECT": "0"})
    assert res.stdout.split()[:2] == ["ok", "seeded"]
    assert f"heapscope: hot sizes from {pattern_profile}: 528 (" in res.stderr
    assert "608 (" in res.stderr


def test_heapscope_run_hot_sizes_errors(heapscope, hot_program, tmp_path):
    res = heapscope("run", "--allocator", "glibc", "--hot-sizes", tmp_path, "--", "true",
                    check=False)
    assert res.returncode != 0 and "--hot-sizes works with hsmalloc only" in res.stderr
    assert "Traceback" not in res.stderr
    res = heapscope("run", "--allocator", "hsmalloc", "--hot-sizes", tmp_path, "--", "true",
                    check=False)
    assert res.returncode != 0 and "holds no profile" in res.stderr
    assert "Traceback" not in res.stderr
