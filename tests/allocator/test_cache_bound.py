"""The bound of a thread's cache of a small class (sizeclass.c, hsm_class_set_size):
64 KiB of blocks, at most 2048 (HSM_CACHE_MAX_BLOCKS), so a 16-byte class holds 2048
of the blocks its thread frees, and they come back without a slow path."""
from hsm_linked import program_figures


def test_a_16_byte_class_gets_2048_freed_blocks_back_on_the_fast_path(build, native):
    """cache_bound.c: a new thread allocates N blocks of 16 bytes, frees them all and
    allocates N again. Up to 2048 the second round never leaves the fast path; at 2049
    the 2049th free overflowed the cache (its newest half went back to the page) and the
    round refills once, the page's returned blocks taken whole. With the bound of 1024
    blocks (before 2026-11-28) N = 2048 made 3 refills and N = 2049 made 4."""
    figures = program_figures(build, native, "cache_bound.c", "run",
                              env={"HSMALLOC_HOT_DETECT": "0"})
    assert figures == {"slow1024": 0, "slow2048": 0, "slow2049": 1}
