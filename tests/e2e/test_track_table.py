"""Tracking's side table (src/recorder/track/table.h: a compact cuckoo table of 16-byte
slots, with a wide table beside it) under known loads, tests/programs/trk_table.c:
every figure exact through its growth, its cuckoo walks and deletions, blocks that
change generation (made old, their clock stored coarser), allocation numbers past
2^20 (epochs), other threads' frees, and addresses only the wide table can hold; and
its memory: at most 24 bytes per live block."""
from collections import Counter

import pytest

from heapscope.allocators import find_allocator
from heapscope.profile import read_profile

SIZES = (16, 24, 32, 40, 48, 64, 80, 96, 128, 160, 200, 256, 400)


def record(heapscope, build, out, *args, options=(), env=None):
    exe = build("trk_table.c", "-O2", "-pthread")
    # no sampled stacks: each size's figures in its one row, as the table holds them
    res = heapscope("record", "-o", out, "--track", "--sample-bytes", "off", "--no-symbolize",
                    *options, "--", exe, *args, env=env, timeout=900)
    assert res.stdout.strip() == "done"
    [path] = out.glob("heapscope.*.hsp")
    t = read_profile(path).tracking
    assert (t.untracked, t.untracked_bytes) == (0, 0)
    return t, {s.size: s.life for s in t.stacks if s.region == "(none)" and not s.frames}


def churn_expected(n):
    first = Counter(SIZES[i % 13] for i in range(n))
    again = Counter(SIZES[i % 13] for i in range(n // 2))
    freed_again = Counter(SIZES[i % 13] for i in range(n // 4))
    return first, again, freed_again


@pytest.mark.parametrize("generation_bits", [None, "26"], ids=["default", "short-generations"])
def test_churn_through_growth_walks_and_deletions_is_exact(heapscope, build, tmp_path,
                                                           generation_bits):
    """300,000 blocks of 13 sizes live together (the shards grow from 1,024 slots, the
    cuckoo walks run near 9/10 full), freed in a shuffled order, a second round, a
    quarter leaked. With generations of 2^26 clock units (some 20 ms) the table makes
    its blocks old many times during the run: the same figures."""
    n = 300_000
    env = {"HEAPSCOPE_TRACK_GENERATION_BITS": generation_bits} if generation_bits else None
    t, rows = record(heapscope, build, tmp_path, "churn", n, env=env)
    first, again, freed_again = churn_expected(n)
    for size in SIZES:
        life = rows[size]
        assert (life.allocs, life.frees) == (first[size] + again[size],
                                             first[size] + freed_again[size]), size
        assert life.live_at_end == again[size] - freed_again[size], size
        assert life.live_at_peak == first[size], size   # the peak: all n live
        assert sum(life.time_hist) == sum(life.between_hist) == life.frees, size
    # the compact table: 16-byte slots 9/10 full at most, grown by a third: <= 24 B a block
    # (tables of every shard; records, windows and the rest are a few hundred KiB here)
    assert t.table_bytes <= 24 * n + (1 << 20), t.table_bytes


@pytest.mark.parametrize("limit, temporaries", [(3_000_000, 1), (2_999_999, 0)])
def test_allocations_in_between_across_epochs_are_exact(heapscope, build, tmp_path, limit,
                                                        temporaries):
    """A block outliving 3,000,000 other allocations of its thread (its allocation number
    and the free's three epochs of 2^20 apart, its stamp keeping 20 bits): exactly
    3,000,000 in between, whether its clock stayed young or was made old."""
    t, rows = record(heapscope, build, tmp_path, "between", 3_000_000,
                     options=("--temporary-between", str(limit)),
                     env={"HEAPSCOPE_TRACK_GENERATION_BITS": "26"})
    life = rows[1000]
    assert (life.allocs, life.frees, life.temporaries) == (1, 1, temporaries)
    # bin b holds [2^(b-1), 2^b): 3,000,000 is in bin 22
    assert life.between_hist[22] == 1 and sum(life.between_hist) == 1
    small = rows[24]
    assert (small.allocs, small.frees) == (3_000_000, 3_000_000)
    assert small.between_hist[0] == 3_000_000   # each freed before the next allocation


def test_other_threads_frees_of_blocks_live_together(heapscope, build, tmp_path):
    """4 threads, 50,000 blocks each live at once (the shards grow under 4 writers), each
    thread frees the next one's blocks: every block allocated and freed once."""
    t, rows = record(heapscope, build, tmp_path, "threads", 4, 50_000)
    for k in range(4):
        life = rows[32 + 16 * k]
        assert (life.allocs, life.frees, life.live_at_end) == (50_000, 50_000, 0), k
        assert sum(life.time_hist) == 50_000


def test_addresses_off_16_bytes_go_to_the_wide_table(heapscope, build, tmp_path):
    """Under jemalloc 8-byte blocks are 8-byte aligned: the compact key (16-byte granules)
    cannot hold them, the wide table does; every figure as exact."""
    jemalloc = find_allocator("jemalloc")
    assert jemalloc is not None, "jemalloc missing: apt-get install libjemalloc2"
    n = 20_000
    t, rows = record(heapscope, build, tmp_path, "tiny", n, options=("--allocator", "jemalloc"))
    life = rows[8]
    assert (life.allocs, life.frees, life.live_at_end, life.live_at_peak) == (n, n, 0, n)
    assert life.between_hist[0] == 1   # the last block, freed first
