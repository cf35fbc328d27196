"""`record --track` over glibc takes the hooks' tracking fast path (hooks/hot.c's TRACK:
malloc, calloc, free, operator new and delete counted in the thread's cached counts, the
block handed straight to tracking). The programs of test_record_counts.py, recorded with
--track: the same exact counts per size, region and API as without it, every block
tracked once (allocated, freed), and the failed allocations (malloc of SIZE_MAX / 2,
operator new of 2^62 nothrow and throwing) counted apart and never tracked. Only
sizes below 1024 take the fast path: trk_fast_cxx.cpp's small operator new/delete."""
from collections import defaultdict

from heapscope.profile import read_profile


def record_tracked(heapscope, out, *cmd):
    # no sampled stacks: each (region, size) in one row, as tracking holds it
    res = heapscope("record", "-o", out, "--track", "--sample-bytes", "off",
                    "--no-symbolize", "--", *cmd)
    [path] = out.glob("heapscope.*.hsp")
    return res.stdout, read_profile(path)


def region_counts(p, region):
    sizes = {size: n for (r, size), n in p.size_counts.items() if r == region}
    apis = {api: n for (r, api), n in p.api_counts.items() if r == region}
    return sizes, apis


def tracked(p, region):
    """size -> (allocs, frees, live at the end) of tracking's rows in region."""
    out = defaultdict(lambda: [0, 0, 0])
    for s in p.tracking.stacks:
        if s.region == region:
            acc = out[s.size]
            acc[0] += s.life.allocs
            acc[1] += s.life.frees
            acc[2] += s.life.live_at_end
    return {size: tuple(v) for size, v in out.items()}


def test_c_calls_counted_and_tracked_exactly(heapscope, build, tmp_path):
    exe = build("rec_counts.c", "-DHEAPSCOPE_WEAK", "-pthread")
    stdout, p = record_tracked(heapscope, tmp_path, exe)
    assert "realloc0=0" in stdout
    assert (p.tracking.untracked, p.tracking.untracked_bytes) == (0, 0)
    sizes, apis = region_counts(p, "phase1")
    assert sizes == {1001: 13}
    assert apis == {"malloc": 10, "calloc": 3, "free": 13}
    assert tracked(p, "phase1") == {1001: (13, 13, 0)}
    assert region_counts(p, "phase2/inner")[0] == {2002: 7}
    assert tracked(p, "phase2/inner") == {2002: (7, 7, 0)}
    # four worker threads x 100 blocks (the main thread's region), worker 0's own 3
    assert tracked(p, "parallel")[5005] == (400, 400, 0)
    assert tracked(p, "parallel/mine") == {6006: (3, 3, 0)}
    assert tracked(p, "(none)")[8008] == (4, 4, 0)
    sizes, apis = region_counts(p, "apis")
    assert sizes == {3001: 1, 3003: 1, 3103: 1, 3203: 1, 4081: 1, 4004: 1, 4032: 1, 4005: 1,
                     4006: 1, 4007: 1}
    # the failed malloc(SIZE_MAX / 2): counted apart, not tracked
    assert p.failed_allocs == {("apis", "malloc", (2**64 - 1) // 2): 1}
    assert apis["failed"] == 1 and apis["malloc"] == 2 and apis["free"] == 8
    # every block of the region tracked once and freed (realloc's moves included)
    rows = tracked(p, "apis")
    assert (2**64 - 1) // 2 not in rows
    assert rows == {
        size: (1, 1, 0) for size in (3001, 3003, 3103, 3203, 4081, 4004, 4032, 4005, 4006,
                                     4007)}


def test_cxx_operators_counted_and_tracked_exactly(heapscope, build, tmp_path):
    exe = build("rec_cxx.cpp", "-DHEAPSCOPE_WEAK")
    stdout, p = record_tracked(heapscope, tmp_path, exe, "throw")
    assert "bad_alloc" in stdout
    sizes, apis = region_counts(p, "cxx")
    sizes.pop(4096, None)  # stdout's buffer, on its first printf
    assert sizes == {1111: 5, 2222: 1, 1152: 2, 2304: 1, 1112: 1, 1201: 1}
    # new of 2^62 bytes, nothrow (NULL) and throwing (bad_alloc): counted apart
    assert {k: n for k, n in p.failed_allocs.items() if k[0] == "cxx"} == {
        ("cxx", "operator_new", 2**62): 2}
    assert (apis["operator_new"], apis["operator_delete"], apis["failed"]) == (13, 11, 2)
    rows = tracked(p, "cxx")
    # the failed news are in no row; besides the operators' blocks, only the region's
    # own mallocs of libstdc++ (stdout's buffer, the bad_alloc exception object)
    assert 2**62 not in rows
    assert {size: r for size, r in rows.items() if size in sizes} == {
        1111: (5, 5, 0), 2222: (1, 1, 0), 1152: (2, 2, 0), 2304: (1, 1, 0), 1112: (1, 1, 0),
        1201: (1, 1, 0)}


def test_small_cxx_blocks_tracked_exactly(heapscope, build, tmp_path):
    exe = build("trk_fast_cxx.cpp", "-DHEAPSCOPE_WEAK")
    _, p = record_tracked(heapscope, tmp_path, exe)
    sizes, apis = region_counts(p, "small")
    assert sizes == {88: 200, 120: 7, 152: 5, 168: 3}
    assert (apis["operator_new"], apis["operator_delete"]) == (215, 212)
    assert tracked(p, "small") == {88: (200, 200, 0), 120: (7, 7, 0), 152: (5, 5, 0),
                                   168: (3, 0, 3)}


def test_access_with_track_keeps_its_pool_blocks(heapscope, build, tmp_path):
    """--access hands sampled blocks from a pool of its own: their frees must reach it, so
    tracking's fast path stands aside (with it, glibc's free got a pool block and the
    program aborted). 20,000 blocks of 48 bytes, about 15 of them sampled."""
    exe = build("trk_many_live.c")
    heapscope("record", "--access", "--track", "--no-symbolize", "-o", tmp_path, "--", exe,
              "20000", "48")
    [path] = tmp_path.glob("heapscope.*.hsp")
    p = read_profile(path)
    assert p.complete and p.snapshot_reason == "exit"
    assert tracked(p, "(none)")[48] == (20000, 20000, 0)
