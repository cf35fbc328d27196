"""Call-site lanes (src/allocator/site.c): operator new from different call sites of one
size class gives each of the first HSM_SITE_LANES (4) sites its own pages, a fifth
shares lane 0 with one of them; blocks stay dense; delete from another thread works; lanes
are off with HSMALLOC_SITE_LANES=0 and in secure mode (tests/allocator/site_lanes.cpp)."""
import json
import os
import re
import subprocess

import pytest

from helpers.elf import without_comment

N = 2000
SIZES_N = 3000  # site_sizes.cpp's N


@pytest.fixture(scope="module")
def site_lanes(build):
    return build("../allocator/site_lanes.cpp", "-O1", "-pthread", name="site_lanes")


def run(exe, native, *args, **env):
    full = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"), **env)
    res = subprocess.run([str(exe), *args], capture_output=True, text=True, env=full, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def sites(out):
    rows = re.findall(r"site (\d) pages (\d+) shared (\d+) dense (\d+)", out)
    assert len(rows) == 5, out
    assert out.rstrip().endswith("remote ok"), out
    return {int(k): (int(p), int(s), int(d)) for k, p, s, d in rows}


@pytest.mark.parametrize("packed", ["1", "all"])
def test_sites_of_one_class_get_pages_of_their_own(site_lanes, native, packed):
    got = sites(run(site_lanes, native, HSMALLOC_PACKED=packed))
    # 2000 blocks of 24 bytes are 47 KiB. Five sites, four lanes: in order of first
    # appearance the sites take lanes 0, 1, 2, 3, then 0 again (the thread's first new
    # makes its heap and learns its site too): sites 0 and 4 share pages, the other
    # three have pages of their own.
    alone = [k for k, (pages, shared, dense) in got.items() if shared == 0 and dense == N - 1]
    mixed = [k for k, (pages, shared, dense) in got.items() if shared == pages and dense < N // 2]
    assert alone == [1, 2, 3] and mixed == [0, 4], got


@pytest.mark.parametrize("env", [{"HSMALLOC_SITE_LANES": "0"}, {"HSMALLOC_SECURE": "1"}])
def test_lanes_off(site_lanes, native, env):
    got = sites(run(site_lanes, native, **env))
    for k in range(5):
        pages, shared, dense = got[k]
        assert shared == pages, got  # every site's blocks share slices with the others
        if "HSMALLOC_SITE_LANES" in env:
            assert dense == 0, got  # interleaved in allocation order: never 24 apart


def PACKED(n):
    return (n + 7) // 8 * 8


def ALIGNED(n):
    return (n + 15) // 16 * 16


@pytest.mark.parametrize("packed, comment, want", [("1", True, PACKED), ("1", False, ALIGNED),
                                                   ("0", True, ALIGNED), ("all", False, PACKED)])
def test_lane_blocks_have_the_class_size(site_lanes, native, packed, comment, want):
    """new keeps C++'s 16-byte alignment (__STDCPP_DEFAULT_NEW_ALIGNMENT__, which clang
    relies on) unless the calling code was built by GCC only (its .comment): the packed
    sizes 16k+1 .. 16k+8 take the 16-byte class above; packed, the 8-byte classes, as
    malloc does. HSMALLOC_PACKED=0 never packs, =all always."""
    exe = site_lanes if comment else without_comment(site_lanes)
    out = run(exe, native, "sizes", HSMALLOC_PACKED=packed)
    usable = dict(tuple(map(int, line.split())) for line in out.split("\n") if line)
    assert usable == {n: want(n) for n in range(17, 129)}


def test_new_keeps_16_byte_alignment_and_counts_the_request(build, native, tmp_path):
    """::operator new(size_t) promises __STDCPP_DEFAULT_NEW_ALIGNMENT__ (16), which clang
    relies on: from code of unknown compiler (no .comment) no new block is 8-aligned by
    default, and neither is a malloc block (glibc's 16, which Eigen asserts) unless
    HSMALLOC_PACKED=1; the statistics count each new(24) as 24 bytes requested in a
    32-byte block. Code built by GCC gets packed blocks: 24 in 24."""
    gcc = build("../allocator/new_align.cpp", "-O1", name="new_align")
    unknown = without_comment(gcc)
    bad_new, packed_malloc = map(int, run(unknown, native, "align").split())
    assert bad_new == 0 and packed_malloc == 0
    bad_new, packed_malloc = map(int, run(unknown, native, "align", HSMALLOC_PACKED="1").split())
    assert bad_new == 0 and packed_malloc > 0
    bad_new, _ = map(int, run(unknown, native, "align", HSMALLOC_PACKED="all").split())
    assert bad_new > 0
    bad_new, _ = map(int, run(gcc, native, "align").split())
    assert bad_new > 0
    for exe, block in ((unknown, 32), (gcc, 24)):
        totals = []
        for n in (1000, 4000):
            out = tmp_path / f"stats{n}.json"
            run(exe, native, "keep", str(n), HSMALLOC_STATS="json", HSMALLOC_STATS_FILE=str(out))
            stats = json.loads(out.read_text().splitlines()[-1])
            totals.append((stats["requested_total"], stats["allocated_total"], stats["allocs"]))
        (r1, a1, n1), (r2, a2, n2) = totals
        assert (r2 - r1, a2 - a1, n2 - n1) == (3000 * 24, 3000 * block, 3000), exe.name


@pytest.mark.parametrize("comment", [True, False])
def test_a_site_of_a_lane_that_changes_size_or_meets_a_default_chain(build, native, comment):
    """new's fast path keeps, per call site, the size it last asked for and its class
    (src/allocator/cxx.c): a lane-1 site asking for 17..128 bytes in turn gets each
    size's class (8-byte steps packed, 16 for code of unknown compiler), its 24-byte
    blocks stay off lane 0's pages, the heap counts every new and sized delete with its
    request; a default chain takes the site's new, and the lane has it again after."""
    exe = build("../allocator/site_sizes.cpp", "-O1", "-pthread", name="site_sizes")
    if not comment:
        exe = without_comment(exe)
    out = run(exe, native, "packed" if comment else "aligned")
    rounds, sizes = 50, range(17, 129)
    assert f"usable 0\napart 0\n" in out, out
    assert f"counted {rounds * len(sizes)} {rounds * sum(sizes)} {rounds * len(sizes)}\n" in out, out
    assert out.rstrip().endswith("chain 1 0"), out
    assert f"lane0 {24 if comment else 32} counted {SIZES_N + 1} {(SIZES_N + 1) * 24} {SIZES_N}\n" in out, out


def test_lane_0_new_takes_malloc_hot_size_class(build, native):
    """A site of lane 0 takes malloc's classes on new's fast path too: with 32 named a hot
    size, the 32-byte objects of a lane-0 site all come from the hot class; without (and
    no detection), none."""
    exe = build("../allocator/site_sizes.cpp", "-O1", "-pthread", name="site_sizes")
    named = run(exe, native, "packed", HSMALLOC_HOT_SIZES="32", HSMALLOC_HOT_DETECT="0")
    assert f"hot32 {SIZES_N}\n" in named, named
    assert "hot32 0\n" in run(exe, native, "packed", HSMALLOC_HOT_DETECT="0")
