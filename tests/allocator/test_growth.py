"""Resident memory of arrays grown by copies (FreeFem++'s pattern: fresh memory must
not pile up on top of freed memory kept idle), purged huge mappings reused, and freed
large memory serving the next large request (realloc-large's pattern)."""
from hsm_linked import program_figures

MIB = 1 << 20


def figures(build, native, mode, env=None):
    return program_figures(build, native, "growth.c", mode, env)


def test_growth_by_copies_keeps_rss_at_what_is_live(build, native):
    """Three series of blocks growing 1.25 -> 15 MiB by 1.2: the freed blocks (huge
    mappings of ever larger sizes, never reused) used to stay resident in the huge
    cache for the decay delay (8 s with room): 85 MB resident for 31 MB live; then each
    new mapping gave back as much idle memory above the 2 MiB budget (and faulted its
    own pages in). Now the block freed last is the front of the next one (its pages
    moved, not faulted), and what the next series' first blocks (in segments, which no
    freed mapping can serve) commit, idle mappings give back."""
    f = figures(build, native, "growth")
    live = f["live_peak"]
    assert 29 * MIB < live < 30 * MIB
    # the resident set grows by what is live, and half a MiB
    assert f["rss_peak"] <= live + MIB // 2
    # the spy's committed memory: live mappings (whole pages), and half a MiB
    assert f["committed_peak"] <= live + MIB // 2
    # only the segments' growth gave memory back: the 4 large blocks of each of the
    # second and third series (1.25 - 1.8 MiB), while the previous series' mappings sat
    # idle; a huge block never commits fresh memory while the cache has resident pieces
    assert 2 * 5 * MIB < f["growth_purged"] < 2 * 12 * MIB


def test_small_heap_does_not_keep_freed_large_blocks_beside_fresh_ones(build, native):
    """A small heap's buffer grown by copies among large blocks (GROMACS's large
    blocks: 375, 386, 772 KB, and 1 MiB at its end): with the budget of idle
    memory at 2 MiB whatever the heap's size, the freed blocks' slices (784 KiB) stayed
    resident beside the fresh slices of the next ones: 3.87 MB resident for 2.9 MB live
    (GROMACS 1.08x glibc's max RSS). The budget is 256 KiB for a small heap now."""
    f = figures(build, native, "small")
    assert f["live"] == 2_895_872
    # headers, the budget of idle memory (256 KiB), statm's FILE: 3.28 MB (main 3.87)
    assert f["rss"] <= f["live"] + 512 * 1024, f
    assert f["growth_purged"] >= 512 * 1024, f


def test_purged_huge_mapping_is_reused(build, native):
    """HSMALLOC_DECAY_MS=0 purges a freed huge mapping at once: the purge zeroed its
    header, where the cache read its size, so it was never reused and its unmapping
    was munmap(NULL, 0): every allocation mapped 4 MiB more (420 MB after 100)."""
    f = figures(build, native, "reuse", {"HSMALLOC_DECAY_MS": "0"})
    assert f["same"] == 100
    assert f["reserved_peak"] <= 5 * MIB


def test_freed_large_memory_serves_the_next_large_request(build, native):
    """realloc-large (random 8 KiB-1 MiB reallocs) held 33.5 MiB against jemalloc's
    22.8: blocks above 960 KiB were huge mappings, kept resident in the huge cache and
    reused only for blocks of nearly their size; a fully free cached segment was taken
    only when no heap segment had room, however many fresh slices that room cost; a
    block that could not grow into the slices after it was copied to a run elsewhere.
    Before, the split step committed 640 KiB fresh (600 KiB after 1.2 MiB freed), the
    cached one purged the cached mapping and faulted 1.3 MiB in again, and b was
    copied to 512 KiB of fresh slices."""
    f = figures(build, native, "large")
    # 1.2 MiB freed (a run of slices now), then 600 KiB: taken from its slices
    assert f["split_committed"] == 0
    # 1.9 MiB (a segment of its own) freed, then 1.3 MiB: the cached segment's
    # resident slices, not fresh ones of the heap's segment
    assert f["cached_committed"] == 0
    # b grew down into a's slices (the program checks its contents): nothing committed
    # (a's free gives back what the earlier steps left idle beyond the budget: less)
    assert f["slide_moved"] == 1
    assert f["slide_committed"] <= 0
    for step in ("split", "cached"):
        assert abs(f[step + "_rss"]) < 128 * 1024, step
    assert f["slide_rss"] < 128 * 1024


def test_segment_taken_from_the_cache_keeps_its_resident_slices(build, native):
    """recached_segment.c: an empty segment, cached resident, is taken back by a small
    block; its 23 other resident slices serve 300 rounds of a 1 MiB block. Before, the
    header's reset left the segment idle since time 0, so the first decay pass of the
    rounds purged those slices at once (1.4 MiB), however fresh; mesh-refine's rounds
    faulted 5,000 pages in again for it. The first round's free gives back what lies
    beyond the idle budget (256 KiB) and the round's block: 3 slices, once."""
    f = program_figures(build, native, "recached_segment.c", "-")
    assert f["purged"] <= 192 * 1024


def test_freed_large_blocks_do_not_stay_resident_to_the_exit(build, native):
    """GROMACS's end: 256 and 512 KiB buffers live, a 1 MiB buffer written and freed three
    times, then the two freed. Idle memory was given back only when fresh memory was
    committed (or after the decay's 8 s): all 1.75 MiB stayed resident to the exit,
    where the kernel's count of the resident set (ru_maxrss) read 0.3-0.6 MiB above
    the exact peak. Now a large block's free gives back the heap's free slices beyond
    the budget (256 KiB) and the block itself; the 1 MiB rounds still reuse theirs."""
    f = figures(build, native, "shrink")
    # main: 1.75 MiB; now the budget, the 512 KiB block freed last, and statm's FILE
    assert f["held"] <= (256 + 512 + 192) * 1024, f
    # the first round's fresh megabyte; the next two reuse it (not purged between)
    assert f["round_faults"] <= 256 + 16, f
