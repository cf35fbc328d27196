"""What goes back to the OS as a big class's page goes back to its segment (giveback.c):
the purges (hsmalloc_stats_get), minor faults and resident pages of 19 rounds of class
12,288."""
from hsm_linked import program_figures

WRITTEN = 32 * 12288 // 4096  # the 4 KiB pages of a round's blocks, every one written


def test_a_page_emptied_while_its_class_is_in_use_keeps_its_slices(build, native):
    """32 blocks written and freed each round: the pages the cache's flush empties go
    back to their segment while the class allocates, and the next round carves its
    blocks on the same slices, resident. Before, each such page's slices went back to
    the OS and were faulted in again: 114 purges, 1,710 faults, 6 of the 96 pages
    resident after the last round (rptest's classes of 9-16 KiB: 296 madvise a run)."""
    f = program_figures(build, native, "giveback.c", "busy")
    assert f["purges"] == 0
    assert f["resident"] == WRITTEN
    assert f["faults"] < 100


def test_a_page_of_an_idle_class_gives_its_slices_back(build, native):
    """One block a round, then slow paths of another class, then 10 ms: idle for a
    sweep, the class sends its block home and its page's slices go back to the OS with
    it, one purge a round (espresso's big classes, which take turns on the same slices,
    made again a median 124 ms after)."""
    f = program_figures(build, native, "giveback.c", "apart")
    assert f["purges"] == 19


def test_a_class_made_again_at_once_keeps_its_next_pages_slices(build, native):
    """The same rounds without the 10 ms: each page is made again within microseconds
    of going back, and once that has happened twice in a row the class keeps its next
    pages' slices: 1 purge in the rounds counted (the second round's). Before, each
    round's were given back and faulted in again: 19 purges (rptest's classes of 9-16
    KiB). Up to 3 allowed: a tick of the coarse clock (4 ms) falling between a page's
    going and its remaking lets the next two go back."""
    f = program_figures(build, native, "giveback.c", "idle")
    assert f["purges"] <= 3


def test_a_class_made_again_at_once_keeps_its_slices_through_short_gaps(build, native):
    """The same rounds with 5 ms before every fourth (a producer preempted: xmalloc-test
    runs four threads on two cores): a gap shorter than HSM_GIVEBACK_LATE_MS leaves the
    class's pattern as it was, so its pages' slices stay kept: at most 3 purges, as
    without the gaps. Before, each gap cleared it and the two pages after it went back
    to the OS and were faulted in again: 8 to 10 purges (xmalloc-test's batches of
    32,776 bytes, 1,248 madvise calls and 51,000 faults in a 3 s secure run)."""
    f = program_figures(build, native, "giveback.c", "gaps")
    assert f["purges"] <= 3
