"""The pages of the hot classes above 4 KiB and of the fixed classes they take over
(hot_big_pages.c; purge.c, hot.c, sizeclass.c): a fixed class a hot class took over gives
its emptied pages back as they empty, two pages of a big hot class share a segment, and
such a class refills from its blocks written before ahead of fresh ones. The ghost-layer
mix with every element written (hs-wl-ghost-cells --big 1 --fill 1) kept the first
window's arrays' emptied pages resident until the segments' decay, gave each 16-slice
page of its hot classes a segment (and a header) of its own, and carved its 4,112-byte
class's pages whole under random churn."""
from hsm_linked import program_figures


def test_a_superseded_fixed_class_gives_its_emptied_pages_back(build, native):
    """1,024 written arrays of 4,112 bytes in the fixed class of 4,608 while the window
    samples, then 64 in the hot class of 4,112 (exact usable size), then the 1,024 freed:
    of the 1,171 OS pages they covered, 19 stay resident: the class's current page (one
    slice, kept as any class's is) and the blocks its thread cache keeps (64 KiB of
    them, the last freed). Before, all 1,171 stayed
    resident until the segments' decay (8 s with room to spare)."""
    f = program_figures(build, native, "hot_big_pages.c", "fixed")
    assert f == {"fixed_pages": 1171, "fixed_resident": 19, "hot_exact": 64}


def test_no_purge_of_superseded_pages_with_decay_off(build, native):
    """HSMALLOC_DECAY_MS=-1 (memory never given back): all 1,171 stay resident."""
    f = program_figures(build, native, "hot_big_pages.c", "fixed",
                        env={"HSMALLOC_DECAY_MS": "-1"})
    assert f == {"fixed_pages": 1171, "fixed_resident": 1171, "hot_exact": 64}


def test_two_pages_of_a_big_hot_class_share_a_segment(build, native):
    """224 arrays of a named hot 65,552 bytes: pages of 15 slices (14 blocks) two to a
    2 MiB segment (31 slices after its header), 8 segments. Before: 16-slice pages of
    15 blocks, each alone in its segment, 15 segments (and 15 headers resident)."""
    f = program_figures(build, native, "hot_big_pages.c", "segments",
                        env={"HSMALLOC_HOT_SIZES": "65552", "HSMALLOC_HOT_DETECT": "0"})
    assert f == {"per_page": 14, "segments": 8}


def test_a_hot_class_above_4_kib_refills_from_blocks_written_before(build, native):
    """A named hot 4,112 bytes: 400 blocks written (a first page of 239, parked full, and a
    second being carved), 120 of the first page's freed, 120 allocated: all 120 are the
    freed ones (blocks already resident), none fresh. Before (a class under 16 KiB did not
    purge, so its refill carved the current page first): 42 reused and 78 fresh blocks
    carved and written (with main's 16-slice pages the first page holds 255 and this
    program stops at its check)."""
    f = program_figures(build, native, "hot_big_pages.c", "refill",
                        env={"HSMALLOC_HOT_SIZES": "4112", "HSMALLOC_HOT_DETECT": "0"})
    assert f == {"reused": 120, "fresh": 0}
