"""The pages of a fixed class a hot class took over give their memory back as they empty,
and two pages of a big hot class share a segment (superseded_pages.c; purge.c, hot.c,
sizeclass.c): the ghost-layer mix with every element written (hs-wl-ghost-cells --big 1
--fill 1) kept the first window's arrays' emptied pages resident until the segments'
decay, and gave each 16-slice page of its hot classes a segment (and a header) of its
own."""
from hsm_linked import program_figures


def test_a_superseded_fixed_class_gives_its_emptied_pages_back(build, native):
    """1,024 written arrays of 4,112 bytes in the fixed class of 4,608 while the window
    samples, then 64 in the hot class of 4,112 (exact usable size), then the 1,024 freed:
    of the 1,171 OS pages they covered, 19 stay resident, those of the blocks the class's
    thread cache keeps (the last 14 freed: 64 KiB of blocks). Before, all 1,171 stayed
    resident until the segments' decay (8 s with room to spare)."""
    f = program_figures(build, native, "superseded_pages.c", "fixed")
    assert f == {"fixed_pages": 1171, "fixed_resident": 19, "hot_exact": 64}


def test_no_purge_of_superseded_pages_with_decay_off(build, native):
    """HSMALLOC_DECAY_MS=-1 (memory never given back): all 1,171 stay resident."""
    f = program_figures(build, native, "superseded_pages.c", "fixed",
                        env={"HSMALLOC_DECAY_MS": "-1"})
    assert f == {"fixed_pages": 1171, "fixed_resident": 1171, "hot_exact": 64}


def test_two_pages_of_a_big_hot_class_share_a_segment(build, native):
    """224 arrays of a named hot 65,552 bytes: pages of 15 slices (14 blocks) two to a
    2 MiB segment (31 slices after its header), 8 segments. Before: 16-slice pages of
    15 blocks, each alone in its segment, 15 segments (and 15 headers resident)."""
    f = program_figures(build, native, "superseded_pages.c", "segments",
                        env={"HSMALLOC_HOT_SIZES": "65552", "HSMALLOC_HOT_DETECT": "0"})
    assert f == {"per_page": 14, "segments": 8}
