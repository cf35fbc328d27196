"""A big class's page given back to the OS as it goes back to its segment, and the class
made again (giveback.c): the purges counted by hsmalloc_stats_get."""
from hsm_linked import program_figures


def test_a_big_class_made_again_at_once_keeps_its_slices(build, native):
    """20 times a block of 12,288 bytes (its class's only page) is freed, its class goes
    idle for a sweep of the caches and its page goes back to its segment, and the next
    block makes the page again microseconds later: the first time the slices go back to
    the OS, then the class keeps them (it was made again within 10 ms: it is held for a
    second), so 1 purge. Before, every round gave them back and faulted them in again:
    20 (rptest's classes of 9-16 KiB: 660 madvise a run). 2 allowed: the window is read
    on the coarse clock, and a thread preempted for over 6 ms between the first give-back
    and the remake is held only from the second."""
    assert program_figures(build, native, "giveback.c", "churn")["purges"] <= 2


def test_a_big_class_made_again_later_still_gives_its_slices_back(build, native):
    """The same rounds 30 ms apart (espresso's classes take turns over tens to hundreds
    of ms): each page's slices go back to the OS as it goes back, 20 purges, as before."""
    assert program_figures(build, native, "giveback.c", "apart") == {"purges": 20}
