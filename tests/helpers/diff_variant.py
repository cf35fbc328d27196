"""What tests/programs/diff_variant.c allocates, as its header table says: per (region, size)
the counts before (as is) and after (-DFIXED), and per stack trace type its change and line mark."""
from conftest import PROGRAMS

SOURCE = PROGRAMS / "diff_variant.c"

# (region, size): (count before, count after)
SIZES = {("build", 40): (100, 100), ("build", 12): (300, 0), ("build", 24): (0, 150),
         ("solve", 64): (50, 80), ("solve", 16): (20, 0), ("solve", 32): (0, 30)}
# per stack trace type, biggest change first (ties: region, then size): (region, size, before,
# after, status, allocating function, line mark)
STACKS = [("build", 12, 300, 0, "gone", "make_pairs", "pairs"),
          ("build", 24, 0, 150, "new", "make_pairs", "pairs"),
          ("solve", 32, 0, 30, "new", "make_index", "index"),
          ("solve", 64, 50, 80, "more", "make_temps", "temps"),
          ("solve", 16, 20, 0, "gone", "make_scratch", "scratch"),
          ("build", 40, 100, 100, "same", "make_nodes", "nodes")]


def line_of(mark):
    hits = [i + 1 for i, t in enumerate(SOURCE.read_text().splitlines()) if f"LINE-MARK {mark} " in t + " "]
    assert len(hits) == 1, mark
    return hits[0]
