"""A segment taken back from the segment cache keeps its resident free slices until the
decay delay says otherwise (cached_segment.c; segment.c's segment_acquire): it came back
with a "free since" of 0, and the owner's next maintenance gave them back at once, for
the next pages to fault in again."""
from hsm_linked import program_figures

SLICES_AFTER = 26 * 16 - 1  # the 4 KiB pages of the 26 slices after the small block


def test_a_cached_segment_keeps_its_resident_slices_through_maintenance(build, native):
    """A 30-slice block written and freed (its segment cached, resident), then a 4-slice
    block takes the segment back and 600 more churn after it (two maintenances, default
    decay): every page of the 26 slices after it stays resident (before: 1, the one the
    churning blocks wrote after the purge)."""
    f = program_figures(build, native, "cached_segment.c", "run")
    assert f["same"] == 1
    assert f["resident"] == SLICES_AFTER


def test_with_decay_0_they_go_back(build, native):
    """HSMALLOC_DECAY_MS=0 (memory back at once): the slices went back with the segment,
    and each churning block's page with the block: none resident."""
    f = program_figures(build, native, "cached_segment.c", "run", env={"HSMALLOC_DECAY_MS": "0"})
    assert f["same"] == 1
    assert f["resident"] == 0
