"""Where segments keep their slice tables (`slice_colors.c`): free reads a segment's table
for every block, and segments are 2 MiB-aligned, so tables at one offset in every header
all fell in the same four sets of a 32 KiB 8-way L1 and evicted each other (a fifth of
free's table reads missed in the live hand-over, under cachegrind). Each segment keeps
its table at the place of its colour (its 2 MiB unit modulo 8): segments of different
colours have their tables in different sets."""
from hsm_linked import program_figures


def test_slice_tables_of_segments_fall_in_different_l1_sets(build, native):
    got = program_figures(build, native, "slice_colors.c", "run")
    assert got["segments"] >= 8, got  # the table found in every segment's header
    assert got["units"] >= 4, got  # the segments have several colours
    # one set per colour: no two colours' tables share a line's set
    assert got["sets"] == got["units"], got
