"""Short-lived threads and the memory of their classes: a class's new page goes back to
the slices its last page carved (churn_pages.c), and a thread that frees other threads'
blocks without allocating their class sends them home sooner (consumer_cache.c, and
hot_cache.c for a hot class), runs of a page drained in one step (remote_runs.c), a
cache's blocks sent home in one batch per owner (remote_owners.c); threads that swap
their working sets keep their pages (the handover workload); an exited thread's free
slices go back without a thread to adopt its heap (abandoned_slices.c)."""
import os
import subprocess

import pytest

# churn_pages.c: 60 x 1024, 24 x 512, 1 x 64 and 1 x 16 bytes, every byte written
CARVED_4K = 60 * 1024 // 4096 + 24 * 512 // 4096 + 1 + 1


def run(build, native, source, env=None):
    lib = str(native / "lib")
    exe = build("../allocator/" + source, "-O1", "-pthread", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name=source[:-2])
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.update(env or {})
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=full, timeout=60)
    assert res.returncode == 0, res.stderr
    return [line.split() for line in res.stdout.splitlines()]


def test_a_class_page_returns_to_the_slice_it_carved(build, native):
    """Every round's thread takes its four classes in another order, from the segment the
    last thread gave back at exit: each class lands on its own slice again, and the
    segment holds the 20 pages of 4 KiB the classes carve (it held 60 from the fourth
    round on when pages went to the first free slice)."""
    lines = run(build, native, "churn_pages.c")
    rounds = [w for w in lines if w[0] == "round"]
    assert len(rounds) == 8
    for w in rounds:
        assert w[2:7] == ["slices", "1", "2", "3", "4"], w
        assert w[7:] == ["resident", str(CARVED_4K)], w
    # the spy: each thread gave every page back, and with them the segment (to the cache)
    assert lines[-1] == ["heap", "segments", "0", "real", "0", "page_bytes", "0"]


def test_a_consumer_sends_blocks_home_in_free_only_batches(build, native):
    """1024 frees of another thread's 64-byte blocks (a cache's bound 64 KiB: 1024
    blocks). A thread that never allocates the class holds 4 KiB, 64 blocks, and sends
    them home at the 65th free, in one push: 15 flushes of 64 by the figures' time (64
    blocks still in its cache, sent at its exit: 1024 blocks, 16 pushes). One that
    allocated the class first (the same heap, adopted: its counters go on) has the
    whole bound: its refill takes 64 fresh blocks of its own page, one goes out and
    comes back, 960 of the producer's fit beside them, the 961st free sends the newest
    half home (512 of the producer's, 1 push) and the last 63 fit: 1024 + 512 blocks,
    16 + 1 pushes. (With a bound of 16 KiB, 256 blocks, the same consumer made 12 pushes
    of 960 blocks: two threads that swap their blocks sent them home and back.) The
    path home only: without the transfer cache (test_transfer.py has the batches it
    takes instead, before its slots are full)."""
    lines = run(build, native, "consumer_cache.c",
                env={"HSMALLOC_HOT_DETECT": "0", "HSMALLOC_TRANSFER": "0"})
    figures = {w[0]: {w[i]: int(w[i + 1]) for i in range(1, len(w), 2)} for w in lines}
    assert figures["only"] == {"remote_frees": 15 * 64, "remote_pushes": 15}
    assert figures["allocating"] == {"remote_frees": 1024 + 512, "remote_pushes": 16 + 1}


def test_a_hot_class_cache_sized_after_the_heap_goes_home(build, native):
    """hot_cache.c: the main thread's heap is made before HSMALLOC_HOT_SIZES gives the
    slot of 528-byte blocks its size (its cache limit was 0 then); it frees 700 such
    blocks of another heap without allocating the size. Its bound starts at 0 (the
    first free finds no room and reads the limit), then the free-only bound, 4096 // 528
    = 7 blocks: the 8th, 15th, ... frees send 7 home, one push each: 99 pushes of 693
    blocks, 7 still cached. With a budget of 0 counted down past 0 the cache held all
    700 (0 pushes)."""
    lines = run(build, native, "hot_cache.c",
                env={"HSMALLOC_HOT_SIZES": "520", "HSMALLOC_HOT_DETECT": "0"})
    figures = {w[0]: {w[i]: int(w[i + 1]) for i in range(1, len(w), 2)} for w in lines}
    assert figures["consumer"] == {"remote_frees": 99 * 7, "remote_pushes": 99}

def figures_of(lines):
    return {w[0]: w[1:] for w in lines}


@pytest.mark.parametrize("secure", ["0", "1"])
def test_the_owner_takes_back_runs_of_a_page_in_one_step(build, native, secure):
    """remote_runs.c: a consumer frees 16220 of the owner's 16384 64-byte blocks (16
    pages, 15 parked full), 4055 of 4096 of 256 bytes and 4 large blocks, a page apart
    in turn. The owner's first slow path drains them all in one go (every page's runs
    spliced back with its count of blocks out; secure mode: block by block, checked):
    the figures are the blocks' own, the 16220 64-byte blocks it allocates again are
    exactly the freed ones (the full pages came back to their queue; had a run not
    unparked its page, 983040 bytes of fresh pages would be carved), and once all is
    freed and collected no page is left (a run miscounted would keep its page). The
    path home only: without the transfer cache, which would hold the first batches."""
    lines = run(build, native, "remote_runs.c",
                env={"HSMALLOC_HOT_DETECT": "0", "HSMALLOC_SECURE": secure,
                     "HSMALLOC_TRANSFER": "0"})
    f = figures_of(lines)
    # the usable sizes: 16220 x 64 + 4055 x 256 + 4 large (default: 262144 each; secure
    # mode: the request, 200000)
    assert f["expect"] == ["blocks", "20279",
                           "bytes", "3124736" if secure == "0" else "2876160"]
    assert f["queued"] == ["blocks", "0", "bytes", "0", "drains", "0"]
    # the blocks' own sizes; secure mode's are 8 bytes longer than the request, rounded
    # to 16: 80 and 288 (the class above 272), and 4 slices for 200008
    drained = 3124736 if secure == "0" else 16220 * 80 + 4055 * 288 + 4 * 262144
    assert f["drained"] == ["blocks", "20279", "bytes", str(drained), "drains", "1"]
    if secure == "0":
        assert f["reused"] == ["16220", "of", "16220", "grown", "0"]
    else:
        # secure mode carves 4 KiB of fresh blocks at a time, in random order: blocks
        # carved in the first pass and never handed out (fewer than a page's 819 of 80
        # bytes) come out first; no page is added
        reused, _, freed, _, grown = f["reused"]
        assert 16220 - 819 < int(reused) <= 16220 and (freed, grown) == ("16220", "0")
    assert f["end"] == ["page_bytes", "0"]


@pytest.mark.parametrize("secure", ["0", "1"])
def test_a_cache_goes_home_in_one_batch_per_owner(build, native, secure):
    """remote_owners.c: a consumer frees 100 of owner A's 64-byte blocks, then A's and B's
    in turn (1900 in all); it never allocates the class, so its cache holds 64 and sends
    them home at the 65th free. A flush gathers each owner's runs into one batch: the
    first 64 (A's only) are 1 push, each of the 28 flushes after them 2 (A's and B's),
    and the 44 left at exit 2: 1 + 2 * 28 + 2 = 59 pushes (1801 when each run of one
    owner's blocks was a push of its own). Each owner takes back exactly its own blocks,
    and every page of theirs is given back after (a mixed cache sent whole to one owner
    would give B A's blocks). Secure mode's blocks are 80 bytes (the request and its
    canary): a quarter of 16384 // 80 = 204 is 51 blocks, sent at the 52nd free: 1 push
    for the first 51 (A's), 2 for each of the 36 flushes after, 2 at exit: 75. The
    path home only: without the transfer cache, which would hold the first batches."""
    lines = run(build, native, "remote_owners.c",
                env={"HSMALLOC_HOT_DETECT": "0", "HSMALLOC_SECURE": secure,
                     "HSMALLOC_TRANSFER": "0"})
    f = figures_of(lines)
    pushes = str(1 + 2 * 28 + 2) if secure == "0" else str(1 + 2 * 36 + 2)
    assert f["consumer"] == ["remote_frees", "1900", "remote_pushes", pushes]
    size = 64 if secure == "0" else 80
    assert f["A"] == ["drained", "blocks", "1000", "bytes", str(1000 * size),
                      "end", "page_bytes", "0"]
    assert f["B"] == ["drained", "blocks", "900", "bytes", str(900 * size),
                      "end", "page_bytes", "0"]


def pages_taken(native, tmp_path, rounds):
    """hs-wl-handover on hsmalloc (preloaded): the trace's page_new events (its page_free
    events vary by a few with the order in which the threads exit)."""
    trace = tmp_path / f"handover-{rounds}.trace"
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"),
               HSMALLOC_TRACE=str(trace), HSMALLOC_HOT_DETECT="0")
    res = subprocess.run([str(native / "bin" / "hs-wl-handover"), "--rounds", str(rounds)],
                         capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    events = [line.split()[1] for line in trace.read_text().splitlines()
              if not line.startswith("#")]
    return events.count("page_new")


def test_threads_swapping_working_sets_keep_their_pages(native, tmp_path):
    """hs-wl-handover: two threads each allocate 1000 blocks of 32-256 bytes, an 8000-
    and a 4000-byte array per round and free the other's (barriers between: the figures
    do not depend on timing). A class's current page is the thread's cache of the other's
    blocks then, which stays current once sent home; its own page that became empty went
    back to its segment at once, to be carved again a round or two later: 856 pages
    taken in 200 rounds, 1670 in 400. The page the slow path takes next counts as the
    current one now: the pages of the first rounds serve all of them."""
    assert pages_taken(native, tmp_path, 200) == 38
    assert pages_taken(native, tmp_path, 400) == 38


# abandoned_slices.c: 6 large blocks of 256 KiB freed by a thread that then exits; its
# frees give back what lies beyond the idle budget (256 KiB) and the block freed last
ABANDONED_SLICES = 2 * 256 * 1024


def abandoned_slices(build, native, mode, sleep_ms, decay_ms):
    lib = str(native / "lib")
    exe = build("../allocator/abandoned_slices.c", "-O1", "-pthread", "-L" + lib,
                "-Wl,-rpath," + lib, "-lhsmalloc", name="abandoned_slices")
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.update({"HSMALLOC_DECAY_MS": str(decay_ms), "HSMALLOC_PRESSURE": "0"})
    res = subprocess.run([str(exe), mode, str(sleep_ms)], capture_output=True, text=True,
                         env=full, timeout=60)
    assert res.returncode == 0, res.stderr
    w = res.stdout.split()
    assert w[0::2] == ["held", "after", "purged"], res.stdout
    return {w[i]: int(w[i + 1]) for i in range(0, len(w), 2)}


def test_an_exited_threads_free_slices_decay_without_an_adopter(build, native):
    """The free slices an exited thread left resident in its heap go back once the
    decay delay passes (another thread's maintenance) and at hsmalloc_collect, with no
    new thread to adopt the heap; before the delay they stay for reuse. (Until
    2026-11-28 nothing gave them back: 0 bytes purged, the resident size unchanged.)"""
    kept = abandoned_slices(build, native, "decay", 0, 60_000)
    assert kept["purged"] == 0
    assert kept["after"] >= kept["held"] - 256
    decayed = abandoned_slices(build, native, "decay", 200, 50)
    # (and the main thread's own 192 KiB block's slices, when its churn outlasts 50 ms)
    assert ABANDONED_SLICES <= decayed["purged"] <= ABANDONED_SLICES + 192 * 1024
    assert decayed["after"] <= decayed["held"] - ABANDONED_SLICES // 1024 + 256
    collected = abandoned_slices(build, native, "collect", 0, 60_000)
    assert collected["purged"] >= ABANDONED_SLICES
    assert collected["after"] <= collected["held"] - ABANDONED_SLICES // 1024 + 256


def test_a_successor_thread_takes_over_the_heap_its_predecessor_left(build, native):
    """absorb_heap.c: A leaves 8 pages of 256-byte blocks half used (1024 free blocks)
    and exits after B started (B's heap made new: nothing was abandoned then). B's next
    512 blocks are all A's (ones A or C freed) and no page is made for them: B took A's
    heap over (before: B carved a page of its own, 1 new page, and only the 256 blocks
    A's exit had put in the transfer cache were A's). C's 512 frees of A's kept blocks
    race the takeover (remote frees to A's heap): every one comes home, so B's 4608
    blocks hold all 1536 free ones of A's (before: 256 to 512), none that A still holds,
    none twice."""
    lines = run(build, native, "absorb_heap.c")
    f = figures_of(lines)
    assert f["landed"] == ["512", "of", "512", "new_pages", "0"]
    assert f["reused"] == ["1536", "live", "0", "twice", "0"]
