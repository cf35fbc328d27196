"""Call-site lanes (src/allocator/site.c): operator new from different call sites of one
size class gives each of the first HSM_SITE_LANES (4) sites its own pages, a fifth
shares lane 0 with one of them; blocks stay dense; delete from another thread works; lanes
are off with HSMALLOC_SITE_LANES=0 and in secure mode (tests/allocator/site_lanes.cpp)."""
import os
import re
import subprocess

import pytest

N = 2000


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


def test_sites_of_one_class_get_pages_of_their_own(site_lanes, native):
    got = sites(run(site_lanes, native))
    # 2000 blocks of 24 bytes are 47 KiB. Five sites, four lanes: in order of first
    # appearance the sites take lanes 0, 1, 2, 3, then 0 again (the thread's very first
    # allocation goes through malloc, before its heap exists, so the first site is
    # learned last): exactly two sites share pages, three have pages of their own.
    alone = [k for k, (pages, shared, dense) in got.items() if shared == 0 and dense == N - 1]
    mixed = [k for k, (pages, shared, dense) in got.items() if shared == pages and dense < N // 2]
    assert len(alone) == 3 and len(mixed) == 2, got


@pytest.mark.parametrize("env", [{"HSMALLOC_SITE_LANES": "0"}, {"HSMALLOC_SECURE": "1"}])
def test_lanes_off(site_lanes, native, env):
    got = sites(run(site_lanes, native, **env))
    for k in range(5):
        pages, shared, dense = got[k]
        assert shared == pages, got  # every site's blocks share slices with the others
        if "HSMALLOC_SITE_LANES" in env:
            assert dense == 0, got  # interleaved in allocation order: never 24 apart


def test_lane_blocks_have_the_class_size(site_lanes, native):
    out = run(site_lanes, native, "sizes")
    usable = dict(tuple(map(int, line.split())) for line in out.split("\n") if line)
    assert usable == {n: max(16, (n + 7) // 8 * 8) for n in range(17, 129)}
