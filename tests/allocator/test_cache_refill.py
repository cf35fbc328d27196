"""How a thread's cache of a class refills from its pages (page.c, cache_refill): a page's
list of the blocks its flushes sent back moves into the empty cache whole when the cache
has room for all of it, without a walk over its blocks."""
from hsm_linked import program_figures


def test_a_refill_takes_a_pages_returned_blocks_whole(build, native):
    """refill_whole.c: 3000 blocks of 64 bytes (pages of 1024: 1024, 1024 and 952 carved
    of 960), all but one per page freed: the cache keeps between 512 and 1024 (each flush
    sends its newest half home), the rest are back on their pages. The second round's
    2997 allocations take what the cache kept, then four refills, each a list taken
    whole: the last page's 898 returned blocks, 64 freshly carved there, the first two
    pages' 1023 each. With refills that walked at most 128 blocks (twice the free-only
    bound) the same round made 25."""
    figures = program_figures(build, native, "refill_whole.c", "run",
                              env={"HSMALLOC_HOT_DETECT": "0"})
    assert figures == {"slow": 4}


def test_a_round_of_64_kib_of_tiny_blocks_fits_the_cache(build, native):
    """cache_rounds.c: rounds of 2048 blocks of 16 and 32 bytes (a cache's bound up to 32
    bytes: 2048 blocks, 64 KiB of 32-byte ones), each allocated, then freed as
    glibc-simple frees them: the cache holds every block a round frees, so the next round
    allocates them all without a refill (ten rounds, none slow) and gets the same blocks
    back. With a bound of 1024 blocks each round's frees flushed the newest half home and
    the next rounds refilled: 30 and 50 slow allocations. The 48-byte class keeps 1024
    (espresso's max RSS): its rounds of 1365 blocks refill once a round, 10."""
    figures = program_figures(build, native, "cache_rounds.c", "run",
                              env={"HSMALLOC_HOT_DETECT": "0"})
    assert figures == {"slow16": 0, "reused16": 2048, "slow32": 0, "reused32": 2048,
                       "slow48": 10, "reused48": 1365}
