"""A freed block of a class above 8 KiB, kept in its thread's cache, goes home with its
page after 16 to 31 of its heap's allocation slow paths without an allocation of the
class (idle_pages.c); kept for good, one page per class held 4.6 MiB of carved, idle
blocks in realloc-large that no large block could use."""
import os
import subprocess

from hsm_linked import program_figures

PAGE = 5 * 64 * 1024  # class 106496 (a 100000-byte request): a page of 5 slices
WRITTEN = (100000 + 4095) // 4096  # 4 KiB pages of the block, every one written


def figures(build, native, env=None):
    lib = str(native / "lib")
    exe = build("../allocator/idle_pages.c", "-O1", "-pthread", "-L" + lib,
                "-Wl,-rpath," + lib, "-lhsmalloc", name="idle_pages")
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.pop("HSMALLOC_DECAY_MS", None)
    full.update(env or {})
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=full, timeout=60)
    assert res.returncode == 0, res.stderr
    return {w[0]: int(w[1]) for w in (line.split() for line in res.stdout.splitlines())}


def test_an_idle_big_page_goes_back_after_16_to_31_slow_paths(build, native):
    """Kept while the class is in use (the next 100000-byte block is the same one, from
    the cache), through 15 large allocations after that, given back by the 31st; a large
    block of 5 slices then takes its slices (before: the page stayed, page bytes 327680
    to the end, and the large block went to the slices after it)."""
    f = figures(build, native)
    assert f["kept"] == PAGE
    assert f["after10"] == PAGE
    assert f["same"] == 1
    assert f["after15"] == PAGE
    assert f["after31"] == 0
    assert f["reuse"] == 1
    # with the default decay the slices stay resident, for the large block to reuse
    assert f["resident15"] == WRITTEN
    assert f["resident31"] == WRITTEN
    # the first class above 8 KiB (9216) is the first whose page goes; 8192's stays
    assert f["edge_kept"] == 2 * 64 * 1024
    assert f["edge_after31"] == 64 * 1024


def test_an_idle_big_page_given_back_is_purged_with_decay_0(build, native):
    """HSMALLOC_DECAY_MS=0 returns free slices at once: the kept page's 25 written pages
    are resident after the 15th slow path, none after the 31st."""
    f = figures(build, native, env={"HSMALLOC_DECAY_MS": "0"})
    assert (f["after15"], f["resident15"]) == (PAGE, WRITTEN)
    assert (f["after31"], f["resident31"]) == (0, 0)


def test_an_idle_big_page_goes_back_when_the_cache_took_its_class(build, native):
    """idle_cache.c: the worker's freed 100000-byte block waits in its cache; another
    heap's block of the class takes the cache's one place, the worker's goes back to its
    page, which is empty then and kept as the class's current page for 16 slow paths
    (before the thread cache, the cache became the current page and the kept page stayed,
    327680 bytes, until the class's next slow path); the class's next block comes from
    the cache."""
    lib = str(native / "lib")
    exe = build("../allocator/idle_cache.c", "-O1", "-pthread", "-L" + lib,
                "-Wl,-rpath," + lib, "-lhsmalloc", name="idle_cache")
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=full, timeout=60)
    assert res.returncode == 0, res.stderr
    f = {w[0]: int(w[1]) for w in (line.split() for line in res.stdout.splitlines())}
    assert f == {"kept": PAGE, "after16": 0, "from_cache": 1}


def test_a_big_class_s_cached_block_goes_home_when_the_sweeps_stopped(build, native):
    """stale_cache.c: a 128 KiB block freed into its class's cache, then 0.3 s without a
    slow path, then a 256 KiB large block. The sweeps that send idle big classes' caches
    home run every 16 slow paths, so a program on its fast paths kept such a block and
    its page for good (GROMACS: a 128 KiB block freed at start-up still cached at its
    peak, 0.7 s later). A large allocation 100 ms after the last sweep sweeps now: the block
    goes home and its page back to the segment before the large block is placed, which
    takes its resident slices (32 faults for its 64 pages; main: the page held, 64)."""
    f = program_figures(build, native, "stale_cache.c", "run")
    assert f["held"] == 0, f
    assert f["faults"] <= 32 + 8, f  # (and the stats call and the stack: main 70)
