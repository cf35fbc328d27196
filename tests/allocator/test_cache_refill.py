"""How a thread's cache of a class refills from its pages (page.c, cache_refill): a page's
list of the blocks its flushes sent back moves into the empty cache whole when the cache
has room for all of it, without a walk over its blocks."""
import os
import subprocess


def run(build, native, source, env=None):
    lib = str(native / "lib")
    exe = build("../allocator/" + source, "-O1", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name=source[:-2])
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.update(env or {})
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=full, timeout=60)
    assert res.returncode == 0, res.stderr
    return [line.split() for line in res.stdout.splitlines()]


def test_a_refill_takes_a_pages_returned_blocks_whole(build, native):
    """refill_whole.c: 3000 blocks of 64 bytes (pages of 1024: 1024, 1024 and 952 carved
    of 960), all but one per page freed: the cache keeps 1024, its flushes send the rest
    back to their pages. The second round's 2997 allocations take the cache's 1024, then
    four refills: the last page's 898 returned blocks, 64 freshly carved there, and the
    first two pages' 1023 each, each list whole. When a refill walked at most 128 blocks
    (twice the free-only bound) it took 8 + 1 + 8 + 8 = 25."""
    lines = run(build, native, "refill_whole.c", env={"HSMALLOC_HOT_DETECT": "0"})
    assert lines == [["round2", "slow", "4"]]
