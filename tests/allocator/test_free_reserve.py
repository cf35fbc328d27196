"""Free blocks of a big class beyond the heap's reserve of it give their whole OS pages
back (free_reserve.c; purge.c): a page of a few big blocks almost never empties under
random churn, so before, every free block of every such page stayed resident."""
from hsm_linked import program_figures

RESERVE = {"HSMALLOC_FREE_RESERVE": str(8 * 73728), "HSMALLOC_HOT_DETECT": "0"}


def test_free_blocks_beyond_the_reserve_are_given_back(build, native):
    """48 written blocks of class 73728 freed, no page emptied: the cache's one and the
    reserve's 8 stay resident, the interiors of the other 39 go back (before: 48
    resident, 0 given back); the next 9 allocations take the resident ones, the 10th a
    given-back one; once the class is idle the cache and the reserve go back too."""
    f = program_figures(build, native, "free_reserve.c", "run", env=RESERVE)
    assert (f["resident"], f["purged"], f["mixed"]) == (9, 39, 0)
    assert f["reuse_resident"] == 9
    assert f["tenth_interior"] == 0
    assert f["idle_resident"] == 0


def test_a_negative_reserve_keeps_every_free_block(build, native):
    """HSMALLOC_FREE_RESERVE=-1: nothing is given back, as before."""
    env = dict(RESERVE, HSMALLOC_FREE_RESERVE="-1")
    f = program_figures(build, native, "free_reserve.c", "run", env=env)
    assert (f["resident"], f["purged"], f["mixed"]) == (48, 0, 0)
    assert (f["reuse_resident"], f["tenth_interior"], f["idle_resident"]) == (9, 1, 48)


def test_a_collect_gives_the_reserve_back(build, native):
    """hsmalloc_collect (as a heap's abandonment): the cache's block and the reserve's 8
    are purged too, no freed block stays resident (before: all 48)."""
    f = program_figures(build, native, "free_reserve.c", "collect", env=RESERVE)
    assert (f["resident"], f["purged"], f["mixed"]) == (9, 39, 0)
    assert f["collect_resident"] == 0


def test_with_decay_0_there_is_no_reserve(build, native):
    """HSMALLOC_DECAY_MS=0 (memory back at once): only the cache's block stays resident,
    the other 47 are given back (before: all 48 resident)."""
    env = dict(RESERVE, HSMALLOC_DECAY_MS="0")
    f = program_figures(build, native, "free_reserve.c", "run", env=env)
    assert (f["resident"], f["purged"], f["mixed"]) == (1, 47, 0)
