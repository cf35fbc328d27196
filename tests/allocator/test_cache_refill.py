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
