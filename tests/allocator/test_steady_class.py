"""A big class in steady use keeps its reserve (steady_class.c; cache.c's sweep): a class
allocating one block every 3 sweeps of the caches, as xmalloc-test's producers allocate
their batches, was judged idle at every sweep in between and gave its freed blocks back
to the OS, to fault them in again at the next allocation."""
from hsm_linked import program_figures

NO_HOT = {"HSMALLOC_HOT_DETECT": "0"}  # the fixed class 36,864, as in xmalloc-test


def test_a_class_allocated_every_third_sweep_stops_giving_back(build, native):
    """The class gives its freed block back after one idle sweep (round 1); taken up again
    soon after, it waits two (round 2), then four, longer than its gap: 2 of 40 rounds
    find their block given back, none after the 8th (before: all 40, as many refaults of
    8 pages)."""
    f = program_figures(build, native, "steady_class.c", "run", env=NO_HOT)
    assert f["rounds"] == 40
    assert (f["given_back"], f["late"]) == (2, 0)


def test_a_class_taken_up_again_long_after_gives_back_every_time(build, native):
    """Allocated every 50 sweeps (espresso's 40,960-byte class: every 46-56), the class
    held its given-back block off for far longer than it waited: its wait does not grow,
    and all 10 rounds find their block given back, as before (a wait doubled at every
    allocation after a give-back: 6 of 10)."""
    f = program_figures(build, native, "steady_class.c", "long", env=NO_HOT)
    assert f["rounds"] == 10
    assert f["given_back"] == 10


def test_a_class_left_for_good_still_gives_back(build, native):
    """Once the class allocates nothing for 5,000 slow paths (more than the longest wait,
    256 sweeps), its freed block goes back to the OS as before."""
    f = program_figures(build, native, "steady_class.c", "run", env=NO_HOT)
    assert f["idle_resident"] == 0


def test_a_negative_reserve_gives_nothing_back(build, native):
    """HSMALLOC_FREE_RESERVE=-1 (every free block kept): no round's block given back, and
    the idle class keeps its block resident."""
    f = program_figures(build, native, "steady_class.c", "run",
                        env=dict(NO_HOT, HSMALLOC_FREE_RESERVE="-1"))
    assert (f["given_back"], f["late"], f["idle_resident"]) == (0, 0, 1)
